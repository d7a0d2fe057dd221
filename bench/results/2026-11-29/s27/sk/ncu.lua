M.params = {
  { "bm", { 128 } },
  { "bn", { 144 } },
  { "stages", { 4 } },
  { "csplit", { 1 } },
  { "pdl", { 0 } },
  { "l2pre", { 0 } },
  { "inflight", { 1 } },
  { "kbox", { 1 } },
  { "mc", { 0 } },
  { "nvar", { 1 } },
  { "wstep", { 0 } },
  { "streamk", { 0, 1 } },
}
