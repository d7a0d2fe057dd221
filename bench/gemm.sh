#!/usr/bin/env bash
# The GEMM family against cuBLAS (and optionally a Triton matmul autotuned over
# 15 configs, and torch.compile max-autotune, i.e. Inductor's autotuned Triton
# matmul templates), in one call on a GPU:
# aitune sweep SPEC on a fresh registry, the peers on the same shapes, then a
# ratio table in TFLOP/s and in TB/s of weights (B). Uses the prebuilt build/.
# Writes OUTDIR/gemm-table.txt (the ratios), gemm-stats.txt (per bucket, the
# best of each template and knob), gemm-measurements.tsv (every candidate,
# fastest first), and the sweep's output, winners and peers.
#   bench/gemm.sh OUTDIR [SPEC] [--compile] [--triton] [--cold N] [--stream]
# --cold N: the peers rotate through N copies of B, so the weights are cold in
# L2 as aitune's own timing has them (it flushes L2 before every sample).
# --stream: cuBLAS times the decode cases (m <= 64) back to back over rotating
# copies, as aitune does for tasks with `timing: stream` (specs/gemm-decode.yaml).
set -u
keep=${1:-/tmp/aitune-gemm}
spec=${2:-specs/gemm.yaml}
shift 2 || shift || true
w=$(mktemp -d /tmp/aitune-gemm.XXXX)
mkdir -p "$keep"
db=$w/gemm.db
t0=$(date +%s)
build/aitune sweep "$spec" --db "$db" --quiet ${AITUNE_BUDGET:+--budget $AITUNE_BUDGET} > "$keep/gemm-sweep.txt" 2> "$keep/gemm-sweep.err"
echo "sweep exit $? after $(( $(date +%s) - t0 )) s"
tail -4 "$keep/gemm-sweep.err"
build/aitune show --db "$db" --json > "$keep/gemm-winners.json"
python3 - "$db" "$keep/gemm-measurements.tsv" <<'PY' | tee "$keep/gemm-stats.txt"
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
for r in con.execute("select op, dtype, bucket, count(*), sum(status='ok'), round(avg(compile_ms)), "
                     "round(max(compile_ms)) from measurements group by op, dtype, bucket"):
    print("bucket %s %s %s: %d candidates, %d ok, compile ms mean %s max %s" % r)
# The best of each epilogue (wgmma: direct, tma, rows) per bucket.
for r in con.execute("select op, dtype, bucket, json_extract(config, '$.epilogue') e, count(*), min(median_us) "
                     "from measurements where status = 'ok' and e is not null group by op, dtype, bucket, e"):
    print("bucket %s %s %s: epilogue %s: %d ok, best %.2f us" % r)
# The best of each template per bucket (gemv against rowdot at decode shapes).
for r in con.execute("select op, dtype, bucket, template, count(*), min(median_us) from measurements "
                     "where status = 'ok' group by op, dtype, bucket, template"):
    print("bucket %s %s %s: template %s: %d ok, best %.2f us" % r)
# The gemv family's best with and without programmatic dependent launch,
# per kw (nt: warps splitting k) and csplit (nn: split-K over a cluster);
# the wgmma family's best per stage (staged up front or overlapped).
for key in ("pdl", "kw", "csplit", "stage"):
    for r in con.execute("select op, dtype, bucket, json_extract(config, '$.%s') p, count(*), min(median_us) "
                         "from measurements where status = 'ok' and p is not null group by op, dtype, bucket, p" % key):
        print("bucket %s %s %s: " % r[:3] + "%s %s: %d ok, best %.2f us" % ((key,) + r[3:]))
# Every candidate, fastest first (OUTDIR/gemm-measurements.tsv).
with open(sys.argv[2], "w") as f:
    for r in con.execute("select op, dtype, bucket, template, config, status, median_us from measurements "
                         "order by op, dtype, bucket, status != 'ok', median_us"):
        f.write("\t".join(str(v) for v in r) + "\n")
for r in con.execute("select status, count(*) from measurements group by status"):
    print("status %s: %d" % r)
for r in con.execute("select op, dtype, bucket, config, status, substr(error, 1, 160) from measurements "
                     "where status in ('wrong', 'runtime', 'timeout', 'compile')"):
    print("failed candidate:", " | ".join(str(v) for v in r))
PY
cases=$(python3 - "$keep/gemm-winners.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])):
    s = r["shape"]
    print("%s:%s:%s" % (r["op"], r["dtype"], "x".join(str(s[d]) for d in ("m", "n", "k"))))
PY
)
python3 bench/peers_gemm.py "$@" $cases > "$keep/gemm-peers.jsonl" 2> "$w/peers.err" || tail -5 "$w/peers.err"
python3 - "$keep/gemm-winners.json" "$keep/gemm-peers.jsonl" <<'PY' | tee "$keep/gemm-table.txt"
import json, sys
wins = json.load(open(sys.argv[1]))
peers = {p["case"]: p for p in (json.loads(l) for l in open(sys.argv[2]) if l.strip())}
print("%-32s %9s %9s %9s %9s %8s %8s %8s %7s %7s  %s" % ("case", "aitune", "cublas", "triton", "compile",
      "x cublas", "x triton", "x comp", "w TB/s", "cb TB/s", "config"))
for r in wins:
    s = r["shape"]
    case = "%s:%s:%s" % (r["op"], r["dtype"], "x".join(str(s[d]) for d in ("m", "n", "k")))
    p = peers.get(case, {})
    a, b, c = r.get("tflops", 0), p.get("cublas_tflops", 0), p.get("compile_tflops", 0)
    # Weight bandwidth (B read once), the decode figure of merit.
    esize = 4 if r["dtype"].startswith("f32") else 2
    wt = s["n"] * s["k"] * esize / r["median_us"] / 1e6 if r.get("median_us") else 0
    t = p.get("triton_tflops", 0)
    print("%-32s %9.1f %9.1f %9.1f %9.1f %8.3f %8.3f %8.3f %7.2f %7.2f  %s %s" % (case, a, b, t, c, a / b if b else 0,
          a / t if t else 0, a / c if c else 0, wt, p.get("weight_tbps", 0), r["template"],
          json.dumps(r["config"], separators=(",", ":"))))
PY
# The registry's own view of the same ratios.
build/aitune show --db "$db" --peers "$keep/gemm-peers.jsonl" > "$keep/gemm-show.txt" 2>&1
