local nt_params = {
  { "warps", { 8 } }, { "kw", { 4, 8 } }, { "cpw", { 2 } }, { "vec", { 8 } }, { "seg", { 1, 2 } }, { "lean", { 0, 1 } },
  { "minb", { 0, 1, 4 } }, { "unroll", { 1, 2, 4 } }, { "splitk", { 1 } }, { "l2pf", { 0, 256 } }, { "pdl", { 1 } }, { "l2pre", { 1 } }, { "apf", { 0 } },
}
