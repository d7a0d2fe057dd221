local SWAP_WIDTHS = {
  160, 192, 256,
}
