#!/usr/bin/env bash
# Prepared in session 30 for the next: why the decode kernel with run-time widths (s30/dw/widths.patch) ran bm 64,
# bn 64, csplit 2 4-5% slower at m = 56 and 63 than one width (11.62/11.86 us in call 6 against 11.20/11.25 in call
# 5, other calls, other machines). Here both in one call: the same config from the tree's templates (A, one width)
# and from a copy with the patch (B), timed in alternating sweeps three times each at m = 33, 56, 63, then Nsight
# Compute over one launch of each at m = 63 (warp states, instruction and scheduler statistics: a stall on "no
# instruction" would say the 4x larger code misses the instruction cache). Predicted: B 3-5% slower at 56 and 63 in
# every round, B's "No Instruction" stall share above A's. Run from the tree's root, carry ["build/aitune"].
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
N=bench/results/2026-11-30/s30/dwncu
P=$PWD/bench/results/2026-11-30/s30/dw/widths.patch
python3 bench/narrow.py $OUT/ha swapab $N/sa.lua > /dev/null || exit 1
mkdir -p $OUT/tb && cp -r templates search $OUT/tb/ && (cd $OUT/tb && git apply --include='templates/*' "$P") || exit 1
(cd $OUT/tb && python3 $OLDPWD/bench/narrow.py $OUT/hb swapab $OLDPWD/$N/sa.lua > /dev/null) || exit 1
grep -c dec_widths $OUT/ha/templates/lib/swapab_geom.lua $OUT/hb/templates/lib/swapab_geom.lua
for r in 1 2 3; do
  for h in a b; do
    AITUNE_HOME=$OUT/h$h timeout 60 build/aitune sweep $N/w.yaml --db $OUT/$h$r.db --vendor time --quiet > $OUT/$h$r.txt 2>&1
    echo "round $r $h: $(grep -E '^gemm_nt' $OUT/$h$r.txt | awk '{print $3, $4}' | tr '\n' ' ')"
  done
done | tee $OUT/rounds.txt
for h in a b; do
  AITUNE_HOME=$OUT/h$h timeout 120 ncu --target-processes all -k regex:aitune_gemm -c 1 --section SpeedOfLight \
    --section WarpStateStats --section InstructionStats --section SchedulerStats \
    build/aitune sweep $N/ncu.yaml --db $OUT/n$h.db --vendor off --quiet > $OUT/ncu-$h.txt 2>&1
  echo "ncu $h exit $?"
  grep -E "Duration|Stall|No Instruction|Executed Instructions|Issued Warp|Warp Cycles Per Issued|Eligible" $OUT/ncu-$h.txt | head -20
done
cd $OUT && tar czf all.tgz rounds.txt a?.txt b?.txt ncu-?.txt && rm -rf ha hb tb *.db* a?.txt b?.txt; ls
