#!/usr/bin/env bash
# The next session's device calls, in order (carry ["build/aitune"] each; one per call, a limit of 600 s):
#   1. bash bench/results/2026-11-29/s27/mc/c.sh   row 1's loss at 14336 x 4096, m = 129..256: cuBLASLt's kernel
#      there (s17-ncu-call5, m = 200) is 128 x 200 tiles in a 4x1 cluster, 47.0 us against swapab's 55.1 with L2
#      hit 24% against 44% and 1.7x fewer issue slots: A read once a cluster, not once a CTA. swapab's second
#      mid-size kernel multicasts A (mc 2, 4); last measured on an H100 before its arrive-scope fix. Exhaustive
#      mc 0/1/2/4 x evict 0/1 at one tile of rows, sanitizer first. About 3 minutes.
#   2. bash bench/results/2026-11-29/s23-row2/c.sh 14336x4096   issue 33's second row (not re-run since the
#      twenty-sixth session).
#   3. evict 1 lost 16% at m = 248 (one measurement, s27/evict/call14): the mc probe re-times it at 248.
# Stream-K is not on this list: it lost in the swapped kernel (s25-sk) and in swapab's (s27/sk).
# This file only prints the plan; each step is its own call.
sed -n 2,11p "$0"
