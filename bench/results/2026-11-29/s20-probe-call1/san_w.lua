local SWAP_WIDTHS = {
  144, 176, 208,
}
