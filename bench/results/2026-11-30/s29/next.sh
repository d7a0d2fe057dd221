#!/usr/bin/env bash
# The next session's device calls, in order (carry ["build/aitune"] each; one per call):
#   1. bash bench/results/2026-11-30/s28/ranges6/c.sh            issue 33's first row, every weight in one call, with
#      the decode default's evict and L2 prefetch (calls 7-8 of the twenty-ninth session ran it two weights a call:
#      4096^2's m <= 64 geomean 1.246, 0.004 short of 1.25), and the first GPU run of hold's vendor bar raced
#      beside the finalists (b8dba9b): its trace's probes should say bar=raced nearly everywhere (the last line of
#      python3 bench/trace_split.py on the unzipped trace counts them); the sweep's time against call 4's 318 s; 14336 x
#      4096's m = 193..256 (the bars timed apart had seen cuBLASLt 4-5% slower there than the scan). ~6 min.
#   2. bash bench/results/2026-11-29/s23-row2/c.sh 4096x4096      the second row at 4096^2 (0.847 worst in the twenty-
#      sixth session, not re-run since; 14336 x 4096 0.853 in the twenty-ninth). ~6 min.
#   3. bash bench/results/2026-11-30/s29/mid/c.sh (prepared, checked on the fake worker; 1920 candidates, ~3 min):
#      the mid-size default's hints, exhaustive over swapab's mid-size kernel (bm 64/128, bn = the widths that hold
#      m, csplit 1/2, 4/5 slots, evict 0/1, l2pre 0/1/2) at the four weights, m = 72, 128, 190; the twenty-eighth and twenty-ninth
#      sessions' range winners above m = 64 had evict 1 in 38 of 60 (l2pre 1 in 21), the default has neither. If
#      evict 1 (and l2pre 1) wins by a margin at every weight, the mid default takes them as the decode one did.
#   4. Where the mid-size kernel's stream stalls: ncu --clock-control none at 14336 x 4096, m = 128 (the part's
#      swapab winner, 3.4 TB/s) against the decode kernel at m = 16 (3.8 TB/s): dram throughput, the producer's and
#      consumers' stall reasons. At m = 65..165 the weight's stream (27.5 us at the copy ceiling) sets the floor and
#      cuBLASLt runs 33-35 us; 30 us would be 1.1x.
# This file only prints the plan; each step is its own call.
sed -n 2,20p "$0"
