-- Decode shapes (m <= 64) on Hopper: the weight in wgmma's M dimension,
-- streamed by TMA, split-K over a cluster (templates/lib/swapab.lua).
return lib("swapab").family(OP)
