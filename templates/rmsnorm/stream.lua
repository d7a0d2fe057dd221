-- rmsnorm for rows too long to hold: a statistics pass and a writing pass over
-- global memory (the second read mostly hits L2).
return lib("rows").family(OP, "rmsnorm", "stream")
