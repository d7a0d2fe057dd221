local SWAP_PARAMS = {
  { "wstep", { 0 } },
}
