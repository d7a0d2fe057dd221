#!/usr/bin/env bash
# The next session's device calls, in order (carry ["build/aitune"] each; one per call):
#   1. bash bench/results/2026-11-29/s24-next/c.sh          B's tail map: sanitizer, then tree against patch (~2 min).
#      Land b_tail.patch (git apply; it holds the fixture hashes) if sanitizer-clean and faster at wstep 0.
#   2. bash bench/results/2026-11-29/s23-row2/c.sh 4096x4096   issue 33's second row with the share cap and the
#      wave-step probes (d77898c; not yet measured: compare with s24-row2's figures) (~5 min)
#   3. bash bench/results/2026-11-29/s23-row2/c.sh 14336x4096  (~7 min; its 300 s sweep is budget-bound)
#   4. bench/run ranges (issue 33's first row; last measured in the nineteenth session, before PDL and the tail map)
# This file only prints the plan; each step is its own call.
sed -n 2,9p "$0"
