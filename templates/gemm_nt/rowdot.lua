-- The smallest decode shapes (m <= 4): each weight row read as one
-- contiguous stream, dot products on the FMA pipe (templates/lib/rowdot.lua).
return lib("rowdot").family(OP)
