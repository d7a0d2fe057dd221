M.params = {
  { "bm", { 64 } },
  { "bn", { 32 } },
  { "stages", { 8 } },
  { "csplit", { 1 } },
  { "pdl", { 1 } },
  { "l2pre", { 4 } },
  { "inflight", { 1 } },
  { "kbox", { 2 } },
  { "mc", { 0 } },
  { "nvar", { 1 } },
  { "wstep", { 0 } },
  { "evict", { 1 } },
}
