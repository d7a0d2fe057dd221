local nt_params = {
  { "warps", { 8 } }, { "kw", { 4, 8 } }, { "cpw", { 1, 2 } }, { "vec", { 8 } }, { "seg", { 1 } }, { "lean", { 0 } }, { "minb", { 0 } }, { "unroll", { 4 } },
  { "splitk", { 1 } }, { "l2pf", { 256 } }, { "pdl", { 1 } }, { "l2pre", { 1 } }, { "apf", { 0 } },
}
