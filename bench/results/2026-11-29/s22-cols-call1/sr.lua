local SWAP_ROWS = {
  192,
}
