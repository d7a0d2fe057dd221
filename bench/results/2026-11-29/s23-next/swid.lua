local SWAP_WIDTHS = {
  192,
}
