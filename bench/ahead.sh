#!/usr/bin/env bash
# The compile pool ahead of the GPU (issue 12): the same sweep into two
# fresh registries (cold cubin cache: every candidate compiled), once with
# --ahead 0 (a batch asked only when the last one is timed, as before) and
# once with the default look-ahead (twice -j candidates compiling behind the
# one on the GPU); both wall times and the speedup, and from each sweep's
# trace (AITUNE_TRACE) how busy the compile threads and the GPU were.
#
#   bench/ahead.sh [OUTDIR] [SPEC]     (OUTDIR default $OUT, else /tmp/aitune-ahead)
#
# SPEC defaults to specs/gemm.yaml (5 GEMM buckets, 64 model-guided configs
# each: NVRTC takes 1-3 s per wgmma candidate, the GPU far less). Settings
# from the environment:
#   ARGS     more sweep arguments for both runs (e.g. "--max-evals 24 -j 16")
#   AHEAD    the look-ahead run's --ahead (default: none given, the default depth)
#   LIMIT    each sweep is cut at LIMIT seconds (default 280)
#   AITUNE   the binary (default build/aitune)
# Without a GPU, the fake worker plays one and a per-candidate GPU cost:
#   AITUNE_WORKER=build/tests/fake_worker FAKE_MODE=slow_time:300 bench/ahead.sh
# The model search asks for its next batch knowing fewer results with the
# look-ahead, so its winners may differ from --ahead 0's; both are printed.
set -u
out=${1:-${OUT:-/tmp/aitune-ahead}}
spec=${2:-specs/gemm.yaml}
limit=${LIMIT:-280}
aitune=${AITUNE:-build/aitune}
mkdir -p "$out"
w=$(mktemp -d /tmp/aitune-ahead.XXXX)
trap 'rm -rf "$w"' EXIT
log() { echo "$*" | tee -a "$out/ahead.txt"; }
: >"$out/ahead.txt"
log "spec $spec, args '${ARGS:-}', $(nproc) cores, $("$aitune" --version 2>&1), worker ${AITUNE_WORKER:-on the GPU} ${FAKE_MODE:-}"

# sweep NAME ARGS...: a timed sweep into a fresh registry, traced.
sweep() {
    local name=$1
    shift
    local t0 t1
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    AITUNE_TRACE="$out/$name.trace" timeout "$limit" "$aitune" sweep "$spec" --db "$w/$name.db" --quiet ${ARGS:-} "$@" \
        >"$out/$name-sweep.txt" 2>"$out/$name-sweep.err"
    local rc=$?
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", b - a }' >"$w/$name.s"
    log "$name: exit $rc after $(cat "$w/$name.s") s$([ "$rc" = 124 ] && echo " (cut at $limit s)")"
    grep -E "^sweep: " "$out/$name-sweep.err" | sed 's/^/    /' | tee -a "$out/ahead.txt"
    # aitune's own show: GPU hosts may lack the sqlite3 command.
    "$aitune" show --db "$w/$name.db" 2>/dev/null | awk 'NR > 1 { print $1, $3, $4 ":", $9, $10, $5 " us" }' >"$out/$name-winners.txt"
}

rm -f "$out"/*.trace
sweep off --ahead 0
sweep on ${AHEAD:+--ahead "$AHEAD"}

# From the traces: compile seconds over the wall time (threads busy, on
# average), GPU seconds (verify + time of each candidate) over the wall
# time, and the batch boundaries where the next batch compiled while the
# last one was timed.
for name in off on; do
    awk -v name="$name" -v wall="$(cat "$w/$name.s")" '
        { b = s = e = 0
          for (i = 1; i <= NF; i++) {
              if ($i ~ /^search=/) q = substr($i, 8)
              if ($i ~ /^batch=/) b = substr($i, 7) + 0
              if ($i ~ /^start=/) s = substr($i, 7) + 0
              if ($i ~ /^end=/) e = substr($i, 5) + 0 }
          if ($3 == "compiled" && $0 !~ / shared$/) { comp += e - s; k = $2 "|" q "|" b; if (!(k in first) || s < first[k]) first[k] = s }
          if ($3 == "timed") { gpu += e - s; k = $2 "|" q "|" b; if (!(k in last) || e > last[k]) last[k] = e } }
        END { n = ov = 0
              for (k in last) { split(k, p, "|"); nk = p[1] "|" p[2] "|" (p[3] + 1); if (nk in first) { n++; if (first[nk] < last[k]) ov++ } }
              printf "%s: %.1f s of compiles (%.2f threads busy on average), %.1f s on the GPU (%.0f%% of the wall time); " \
                     "%d of %d batch boundaries compiled the next batch while the last was timed\n",
                     name, comp, comp / wall, gpu, 100 * gpu / wall, ov, n }' "$out/$name.trace" | tee -a "$out/ahead.txt"
done
awk -v a="$(cat "$w/off.s")" -v b="$(cat "$w/on.s")" 'BEGIN { printf "wall time: --ahead 0 %.1f s, look-ahead %.1f s: %.2fx\n", a, b, a / b }' |
    tee -a "$out/ahead.txt"
if cmp -s "$out/off-winners.txt" "$out/on-winners.txt"; then
    log "winners: the same in both runs"
else
    log "winners (--ahead 0, then look-ahead):"
    paste -d '\n' "$out/off-winners.txt" "$out/on-winners.txt" | sed 's/^/    /' | tee -a "$out/ahead.txt"
fi
