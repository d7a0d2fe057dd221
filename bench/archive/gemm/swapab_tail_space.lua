M.params = {
  { "bm", { 64 } },
  { "bn", { 16 } },
  { "stages", { 8 } },
  { "csplit", { 1, 2 } },
  { "pdl", { 1 } },
  { "l2pre", { 0 } },
  { "inflight", { 1 } },
  { "kbox", { 1 } },
}
