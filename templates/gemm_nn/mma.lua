-- Portable mma.sync + ldmatrix + cp.async GEMM, any alignment (templates/lib/mma.lua).
return lib("mma").family(OP)
