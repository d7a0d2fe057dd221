M.params = {
  { "bm", { 128 } },
  { "bn", { 224 } },
  { "stages", { 4 } },
  { "csplit", { 1 } },
  { "pdl", { 1 } },
  { "l2pre", { 0 } },
  { "inflight", { 1 } },
  { "kbox", { 1 } },
  { "mc", { 0, 1 } },
  { "nvar", { 5 } },
  { "wstep", { 8, 16 } },
}
