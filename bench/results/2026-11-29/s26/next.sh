#!/usr/bin/env bash
# The next session's device calls, in order (carry ["build/aitune"] each; one per call, a limit of 600 s):
#   1. bash bench/results/2026-11-29/s26/spans/c.sh   compute-sanitizer over swapab's wstep kernels, then issue 33's
#      first row with wstep (cb83269) and the parts' spans (31442fc), neither measured over a range yet. Compare
#      with s26/ranges-call2 (14336 x 4096: geomean 65..256 0.928, worst 0.850 at m = 152). Look in the trace
#      (zcat OUT/r.tgz's r/trace.txt) for " span gemm_nt m=2^7:align1,n=14336" lines, and in sweep.txt for which
#      part winners are spans (nvar > 1 with wstep 8 or 16). About 6.5 minutes.
#   2. bash bench/results/2026-11-29/s23-row2/c.sh 14336x4096   the second row (m = 257.. is wgmma_swap's, so
#      spans of swapab do not reach it; the part race with spans costs time there too).
#   3. If 14336 x 4096's m = 249..256 still lose (cuBLASLt's tile 165 there ran 6-8% ahead of every swapab width,
#      s26/widths/call6): look at what that kernel is (ncu, nvjet name) before building anything.
# This file only prints the plan; each step is its own call.
sed -n 2,12p "$0"
