M.params = {
  { "bm", { 64 } },
  { "bn", { 16, 48 } },
  { "stages", { 8 } },
  { "csplit", { 1, 2 } },
  { "pdl", { 1 } },
  { "l2pre", { 0 } },
  { "inflight", { 1 } },
  { "kbox", { 2 } },
  { "mc", { 0 } },
  { "nvar", { 1 } },
  { "wstep", { 0 } },
  { "evict", { 0, 1 } },
}
