local SWAP_PARAMS = {
  { "wstep", { 16 } },
}
