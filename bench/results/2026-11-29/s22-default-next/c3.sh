#!/usr/bin/env bash
# Prepared in session 22, not run: three changes to the wgmma kernel's per-tile and per-step overhead against the tree,
# over the twenty-first session's k sweep (21 swapped configs at m = 1049 and 2086, n = 4096, k = 64, 512, 4096),
# x cuBLASLt in each sweep:
#   pu: uniform.patch, the warpgroup index through a shuffle so that the consumers' descriptors live in uniform
#       registers (ptxas 13.0: a k step of 256 x 136 coop from 96 SASS lines with 16 R2UR to 71 with none);
#   pe: pu and lean_store.patch, the swapped kernel's whole tiles stored without bounds (ptxas 13.0: 256 x 136
#       coop's 136 stores a thread from about 1270 SASS lines to 330);
#   pp: pe and prefetch.patch, the tensor maps prefetched at the kernel's start (swapab's kernels do it).
# At k = 64 the swapped kernel trailed cuBLASLt by 2.6 us; Nsight Compute counted 67% more instructions than
# cuBLASLt's kernel, ALU-heavy where cuBLASLt's is uniform-heavy (RESULTS, twenty-second session).
# Needs no set-up: run from the tree's root. lean_store.patch's stores pass tests/cli/trans_store_host.sh (every
# element of D once, nothing outside) on the CPU. Landing a patch that wins: git apply it, then regenerate
# tests/fixtures/kernel_sample/sources.txt's hashes (tests/cli/tmpl_sources.sh says how; every wgmma source changes).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
K=bench/results/2026-11-29/s21-swapk-call1     # the twenty-first session's narrowed space and spec
P=bench/results/2026-11-29/s22-default-next
for v in po pu pe pp; do python3 bench/narrow.py $OUT/$v wgmma $K/k.lua wgmma_swap $K/kw.lua wgmma_swap $K/kb.lua || exit 1; done
(cd $OUT/pu && git apply "$OLDPWD/$P/uniform.patch") || exit 1
for v in pe pp; do (cd $OUT/$v && git apply "$OLDPWD/$P/uniform.patch" && git apply --include='templates/*' "$OLDPWD/$P/lean_store.patch") || exit 1; done
(cd $OUT/pp && git apply "$OLDPWD/$P/prefetch.patch") || exit 1
t0=$(date +%s)    # the stores first: compute-sanitizer over pp's kernels at a ragged shape (both store paths)
AITUNE_HOME=$OUT/pp SANITIZE_SPEC=bench/results/2026-11-29/s22-cols-call1/san.yaml SANITIZE_ARGS="--vendor off" \
    timeout 75 tests/gpu/sanitize.sh $OUT/san > $OUT/san.txt 2>&1
echo "sanitize exit $? in $(( $(date +%s) - t0 )) s"; tail -3 $OUT/san.txt
for v in po pu pe pp; do
  t0=$(date +%s)
  AITUNE_HOME=$OUT/$v timeout 80 build/aitune sweep $K/k.yaml --db $OUT/$v.db --vendor time --quiet > $OUT/$v.txt 2> $OUT/$v.err
  echo "$v exit $? in $(( $(date +%s) - t0 )) s"
  python3 bench/results/2026-11-29/s22-cols-call1/table.py $OUT/$v.db > $OUT/${v}table.txt
done
tar czf $OUT/pres.tgz -C $OUT po.db pu.db pe.db pp.db po.err pu.err pe.err pp.err && rm -rf $OUT/*.db $OUT/*.db.lock $OUT/po $OUT/pu $OUT/pe $OUT/pp
rm -rf $OUT/san
for v in po pu pe pp; do echo "== $v"; sed -n 1,3p $OUT/${v}table.txt; tail -8 $OUT/${v}table.txt | cut -c1-200; done
