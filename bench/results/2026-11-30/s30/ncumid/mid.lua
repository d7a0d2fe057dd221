M.params = {
  { "bm", { 128 } },
  { "bn", { 160 } },
  { "stages", { 5 } },
  { "csplit", { 1 } },
  { "pdl", { 1 } },
  { "l2pre", { 1 } },
  { "inflight", { 0 } },
  { "kbox", { 1 } },
  { "mc", { 0 } },
  { "nvar", { 5 } },
  { "wstep", { 8 } },
  { "evict", { 1 } },
}
