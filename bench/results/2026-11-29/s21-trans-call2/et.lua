local SWAP_EPILOGUES = {
  "trans",
}
