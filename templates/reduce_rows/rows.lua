-- Row sums with a group of threads per row (a slice of a warp up to a block),
-- several vector loads in flight per thread, shuffle or shared-memory reductions.
return lib("rows").family(OP, "sum", "stream", "rows")
