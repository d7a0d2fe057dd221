local SWAP_PARAMS = {
  { "wstep", { 0, 8, 16 } },
}
