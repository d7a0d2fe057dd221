-- Swap-AB decode kernel with the SwiGLU store (templates/lib/swapab.lua:
-- "The gated product").
return lib("swapab").family(OP)
