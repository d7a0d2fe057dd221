#!/usr/bin/env bash
# The next session's device calls, in order (carry ["build/aitune"] each; one per call):
#   1. bash bench/results/2026-11-29/s24-next/c.sh          B's tail map: sanitizer, then tree against patch (~2 min).
#      Land b_tail.patch (git apply; it holds the fixture hashes) if sanitizer-clean and faster at wstep 0.
#   2. bash bench/results/2026-11-29/s23-row2/c.sh 4096x4096   issue 33's second row with the share cap and the
#      wave-step probes (d77898c; not yet measured: compare with s24-row2's figures) (~5 min)
#      For an A/B of the probes in the same session, build the binary before them and run step 2 with it too:
#        git worktree add /tmp/prewave d77898c^ && make -C /tmp/prewave -j2 && cp /tmp/prewave/build/aitune build/aitune-prewave
#        then carry ["build/aitune", "build/aitune-prewave"] and run AITUNE=build/aitune-prewave bash .../c.sh 4096x4096
#   3. bash bench/results/2026-11-29/s23-row2/c.sh 14336x4096  (~7 min; its 300 s sweep is budget-bound)
#   4. bench/run ranges (issue 33's first row; last measured in the nineteenth session, before PDL and the tail map)
# This file only prints the plan; each step is its own call.
sed -n 2,12p "$0"
