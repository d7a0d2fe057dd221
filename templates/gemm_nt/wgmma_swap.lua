-- Hopper: TMA + wgmma with the operands exchanged (templates/lib/wgmma.lua's
-- family, op.swap): Dᵀ = B·Aᵀ, the weight's rows in BM-row tiles and A's m
-- rows in BN-wide ones, so a ragged m tiles into whole waves. It serves m
-- above 256; swapab (the same exchange) the m up to it.
local op = {}
for k, v in pairs(OP) do op[k] = v end
op.swap = true
return lib("wgmma").family(op)
