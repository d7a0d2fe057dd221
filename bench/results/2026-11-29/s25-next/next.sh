#!/usr/bin/env bash
# The next session's device calls, in order (carry ["build/aitune"] each; one per call):
#   0. bash bench/results/2026-11-29/s25-next/carry.sh   is the carried config better where call 3 lost? swapab bn
#      192/224/256 and wgmma's 128 x 128 at 14336 x 4096, m = 193..255, x cuBLASLt (under a minute).
#   1. bash bench/results/2026-11-29/s25-ranges/c.sh   issue 33's first row with warm starts carried and parts
#      warm-started from their siblings (b9e4a14, not yet measured). Compare with s25-ranges/call3: 14336 x 4096's
#      m = 193-211 ran 0.81-0.82x there (part [193, 216) never tried swapab's one tile of 224 rows). Look in the
#      trace (zcat OUT/r.tgz's r/trace.txt) for "warm-start gemm_nt m=2^7:align1,n=14336,k=4096/" lines (~5 min).
#      For an A/B in the same session, build the tree before it (session 25 left it in build/aitune-precarry) and run the same with it:
#        git worktree add /tmp/precarry b9e4a14^ && make -C /tmp/precarry -j2 && cp /tmp/precarry/build/aitune build/aitune-precarry
#        then carry ["build/aitune", "build/aitune-precarry"]; range_scan.sh honours AITUNE=build/aitune-precarry.
#   2. bash bench/results/2026-11-29/s23-row2/c.sh 4096x4096   issue 33's second row with races ending early
#      (56eebd8; measured at 14336 x 4096 only, s25-row2/call6) and the carried warm starts (~6 min).
#   3. bash bench/results/2026-11-29/s23-row2/c.sh 14336x4096 (~6 min).
# This file only prints the plan; each step is its own call.
sed -n 2,15p "$0"
