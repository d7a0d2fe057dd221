-- Decode shapes (m <= 16): the weight streamed once (templates/lib/gemv.lua).
return lib("gemv").family(OP)
