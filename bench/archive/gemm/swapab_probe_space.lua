M.params = {
  { "bm", { 64, 128 } },
  { "bn", { 16 } },
  { "stages", { 8 } },
  { "csplit", { 2 } },
  { "pdl", { 1 } },
  { "l2pre", { 0 } },
  { "inflight", { 0, 1 } },
  { "kbox", { 1 } },
}
