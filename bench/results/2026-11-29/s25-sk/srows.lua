local SWAP_ROWS = {
  64, 128,
}
