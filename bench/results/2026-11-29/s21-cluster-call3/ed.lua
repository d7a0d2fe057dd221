local SWAP_EPILOGUES = {
  "direct",
}
