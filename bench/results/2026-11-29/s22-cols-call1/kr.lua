local SWAP_ROWS = {
  128, 192, 256,
}
