-- Dot-product GEMV for the smallest decode shapes, m <= 4 (templates/lib/rowdot.lua).
return lib("rowdot").family(OP)
