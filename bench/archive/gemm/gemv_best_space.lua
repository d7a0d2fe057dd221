local nt_params = {
  { "warps", { 8 } }, { "kw", { 4, 8 } }, { "cpw", { 2, 4 } }, { "vec", { 8 } }, { "seg", { 2 } }, { "lean", { 1 } },
  { "minb", { 2 } }, { "unroll", { 2 } }, { "splitk", { 1 } }, { "l2pf", { 0 } }, { "pdl", { 1 } }, { "l2pre", { 2, 4 } },
  { "apf", { 1 } },
}
