local SWAP_ROWS = {
  64,
}
