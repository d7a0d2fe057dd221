M.params = {
  { "warps", { 4 } },
  { "kw", { 2 } },
  { "rows", { 2 } },
  { "mrows", { 1, 2 } },
  { "unroll", { 2 } },
  { "pdl", { 1 } },
  { "l2pre", { 1 } },
  { "pipe", { 0 } },
}
