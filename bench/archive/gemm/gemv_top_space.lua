local nt_params = {
  { "warps", { 8 } }, { "kw", { 4, 8 } }, { "cpw", { 2, 4 } }, { "vec", { 8 } }, { "seg", { 2 } }, { "lean", { 1 } },
  { "minb", { 1, 2 } }, { "unroll", { 2 } }, { "splitk", { 1 } }, { "l2pf", { 0 } }, { "pdl", { 1 } }, { "l2pre", { 1, 2, 4 } },
  { "apf", { 0, 1 } },
}
