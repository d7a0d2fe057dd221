local SWAP_PARAMS = {
  { "wstep", { 8, 16 } },
}
