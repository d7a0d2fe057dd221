local SWAP_WIDTHS = {
  136, 176, 192,
}
