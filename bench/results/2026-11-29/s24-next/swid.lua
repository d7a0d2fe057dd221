local SWAP_WIDTHS = {
  128, 160, 192,
}
