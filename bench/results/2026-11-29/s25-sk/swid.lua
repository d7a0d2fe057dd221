local SWAP_WIDTHS = {
  160, 208, 224, 256,
}
