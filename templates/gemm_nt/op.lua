-- D = A·Bᵀ: A m x k, B n x k (F.linear's weight), D m x n, all row-major
-- (templates/lib/gemm.lua).
return lib("gemm").op("nt")
