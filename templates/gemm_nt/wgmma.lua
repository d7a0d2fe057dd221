-- Hopper: TMA + wgmma, warp-specialized, persistent (templates/lib/wgmma.lua).
return lib("wgmma").family(OP)
