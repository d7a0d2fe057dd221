-- Dot-product GEMV for m <= 4 with the SwiGLU store (templates/lib/rowdot.lua:
-- "The gated product").
return lib("rowdot").family(OP)
