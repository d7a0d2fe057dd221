M.params = {
  { "bm", { 64 } },
  { "bn", { 64, 96, 128, 192 } },
  { "stages", { 6 } },
  { "csplit", { 2 } },
  { "pdl", { 1 } },
  { "l2pre", { 0 } },
  { "inflight", { 1 } },
  { "kbox", { 1 } },
  { "mc", { 0 } },
  { "nvar", { 1 } },
}
