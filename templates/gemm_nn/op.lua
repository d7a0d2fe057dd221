-- D = A·B: A m x k, B k x n, D m x n, all row-major (templates/lib/gemm.lua).
return lib("gemm").op("nn")
