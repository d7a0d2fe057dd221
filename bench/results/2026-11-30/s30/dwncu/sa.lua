M.params = {
  { "bm", { 64 } },
  { "bn", { 64 } },
  { "stages", { 8 } },
  { "csplit", { 2 } },
  { "pdl", { 1 } },
  { "l2pre", { 4 } },
  { "inflight", { 1 } },
  { "kbox", { 1 } },
  { "mc", { 0 } },
  { "nvar", { 1 } },
  { "wstep", { 0 } },
  { "evict", { 1 } },
}
