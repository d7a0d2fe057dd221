-- D = SiLU(A·Gᵀ) ⊙ (A·Uᵀ): a gated MLP's gate and up products and their
-- SiLU-times-up in one kernel; B = [G; U], 2n x k (templates/lib/gemm.lua).
return lib("gemm").swiglu_op()
