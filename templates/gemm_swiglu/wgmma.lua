-- Hopper: TMA + wgmma, warp-specialized, persistent, with the SwiGLU
-- epilogue (templates/lib/wgmma.lua: "The gated product").
return lib("wgmma").family(OP)
