M.params = {
  { "bm", { 64, 128 } },
  { "bn", { 200, 232 } },
  { "stages", { 4 } },
  { "csplit", { 1 } },
  { "pdl", { 0 } },
  { "l2pre", { 0 } },
  { "inflight", { 1 } },
  { "kbox", { 1 } },
  { "mc", { 0 } },
  { "nvar", { 1, 5 } },
  { "wstep", { 0, 8 } },
  { "streamk", { 1 } },
}
