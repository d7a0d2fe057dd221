M.params = {
  { "bm", { 128 } },
  { "bn", { 136 } },
  { "stages", { 2, 4, 5 } },
  { "csplit", { 1 } },
  { "pdl", { 1 } },
  { "l2pre", { 0, 2, 4 } },
  { "inflight", { 0, 1 } },
  { "kbox", { 1, 2 } },
  { "mc", { 0, 4 } },
  { "nvar", { 1 } },
  { "wstep", { 0 } },
  { "evict", { 0, 1 } },
}
