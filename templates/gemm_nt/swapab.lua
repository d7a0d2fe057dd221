-- Swap-AB GEMM for small and mid-size m (templates/lib/swapab.lua).
return lib("swapab").family(OP)
