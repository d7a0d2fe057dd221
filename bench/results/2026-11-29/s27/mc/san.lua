M.params = {
  { "bm", { 128 } },
  { "bn", { 200, 232 } },
  { "stages", { 4 } },
  { "csplit", { 1 } },
  { "pdl", { 1 } },
  { "l2pre", { 0 } },
  { "inflight", { 1 } },
  { "kbox", { 1 } },
  { "mc", { 2, 4 } },
  { "nvar", { 1 } },
  { "wstep", { 0 } },
  { "evict", { 1 } },
}
