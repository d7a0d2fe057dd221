#!/usr/bin/env bash
# The next session's device calls, in order (carry ["build/aitune"] each; one per call, a limit of 600 s):
#   1. bash bench/results/2026-11-29/s23-row2/c.sh 14336x4096   issue 33's second row (not re-measured since the
#      twenty-sixth session; swapab's evict does not reach m > 256, the parts' spans race there too).
#   2. Row 1's 14336 x 4096 at m = 129..256 is the weight's stream for cuBLASLt too (3.3-3.4 TB/s on 112 SMs, its
#      128-row tiles). Stream-K lost twice (s25-sk, s27/sk: the pieces' adding costs 6-7 us); what is left is the
#      per-tile efficiency at one wave: ncu the plain kernel (bm 128, bn 144, m = 136) against cuBLASLt's nvjet
#      kernel there (DRAM bytes, L2 hit rate of A, issue stalls) before building anything.
#   3. evict 1 lost 16% at m = 248 (one measurement, s27/evict/call14): re-time it with the neighbours 240..255.
# This file only prints the plan; each step is its own call.
sed -n 2,10p "$0"
