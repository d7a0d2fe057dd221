local SWAP_WIDTHS = {
  136,
}
