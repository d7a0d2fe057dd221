#!/usr/bin/env bash
# The next session's device calls, in order (carry ["build/aitune"] each; one per call):
#   1. bash bench/results/2026-11-29/s23-row2/c.sh 14336x4096   issue 33's second row (not re-run since the
#      twenty-sixth session: 0.859 worst); its parts now polished over themselves (split_polish). ~6 min a weight.
#   2. bash bench/results/2026-11-29/s23-row2/c.sh 4096x4096    the same (0.847 worst in the twenty-sixth).
#   3. bash bench/results/2026-11-30/s28/ranges6/c.sh           the first row again, same tree: the run-to-run
#      spread of the polished sweep (call 6: 14336 x 4096 0.995 / 0.971 / 0.889); its trace gives every probe's
#      slot times, so why wgmma keeps [216, 256) over swapab's span can be read (s28 call 7 was cut before it).
#   4. bash bench/results/2026-11-30/s28/edge/c.sh               the part [216, 256) measured size by size: swapab
#      at m's width and its spans against wgmma and cuBLASLt at m = 216..255 (checked on the fake worker). ~3 min.
# Then the lead at 14336 x 4096, m = 216..255: cuBLASLt changes kernel at m = 249 and beats every slot there by
# 10-16%, so the part's worst loss is decided at 255 and a span level with cuBLASLt at 216..248 loses its race.
# A split where the vendor's time steps (not only where the slots' rankings flip), or split_depth 3 in the
# ranges spec (one sweep took 311 s of its 400 s budget), would let 216..248 take the span.
# This file only prints the plan; each step is its own call.
sed -n 2,15p "$0"
