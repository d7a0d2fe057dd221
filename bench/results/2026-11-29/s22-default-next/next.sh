#!/usr/bin/env bash
# The next session's first device call (about 6 of its 10 minutes): c3.sh (compute-sanitizer and the per-tile
# patches at k = 64, 512, 4096), then c2.sh (the default with 192-row tiles). Run from the tree's root with
# carry ["build/aitune"]; each writes its tables to $OUT.
D=bench/results/2026-11-29/s22-default-next
bash $D/c3.sh; echo "== c2"; bash $D/c2.sh
