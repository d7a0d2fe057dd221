#!/usr/bin/env bash
# The next session's device calls, in order (carry ["build/aitune"] each; one per call unless noted):
#   1. bash bench/results/2026-11-30/s30/wave/c.sh   (~2 min; may share a call with 2 and 3)
#      the wgmma default's wave model at the second row's losing sizes (m = 317..1110, 4096^2 and 14336 x 4096):
#      each tile's best and its waves. If 128 x 192 with two consumers (and 64 x 256 with one) hold the best where
#      they make one wave, add them to WAVE_TILES (lib/wgmma_default.lua) at their fitted cost a wave, check the
#      model's pick against the best at every m of the table (kernel_sample list), then run 4.
#   2. bash bench/results/2026-11-30/s30/m1/c.sh     (~1 min) the m = 1 hole at 4096 x 14336: the sweep's race
#      against three scans of the same registry (session 30's calls 1 and 6: 29.7 us raced, 33.0-35.3 scanned).
#   3. bash bench/results/2026-11-30/s30/dwncu/c.sh  (~2 min) why the run-time decode widths ran bn 64 4-5%
#      slower at m = 56, 63: both kernels in alternating sweeps, then Nsight Compute's warp states of each.
#   4. bash bench/results/2026-11-29/s23-row2/c.sh 4096x4096   (~6 min) the second row at 4096^2 after 1's change
#      and the polish's repaired steps (9088e2a, unmeasured: a part polished around 128 x 128 x 6 stages now races
#      128 x 192 x 4, 1.062x cuBLASLt at m = 744 in call 4) (session 30's call 3: 71 holes, worst 0.846 at m = 744,
#      geomean 0.994). Predicted: m = 683..744 above 1.0x; the sweep's time within 10 s of call 3's 300.
#   5. bash bench/results/2026-11-30/s30/ncumid/c.sh (~2 min; the twenty-ninth session's unrun step 4) where 14336 x
#      4096's mid-size stream stalls: the part winner at m = 128 and the decode winner at m = 16, timed, then Nsight
#      Compute at the GPU's own clocks (L2 and DRAM throughput, warp states).
#   6. The first row whole (bash bench/results/2026-11-30/s28/ranges6/c.sh, ~6 min) if the decode widths come back.
# This file only prints the plan; each step is its own call.
sed -n 2,20p "$0"
