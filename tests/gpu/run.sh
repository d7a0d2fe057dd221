#!/usr/bin/env bash
# The GPU checks of the elementwise pipeline (issue 2). Needs a GPU, the
# prebuilt build/ (make), nvcc, and PyTorch+Triton for the peer.
#   tests/gpu/run.sh OUTDIR
# Prints PASS or FAIL per check, then a table; exits 1 if any check failed.
set -u
keep=${1:-/tmp/aitune-gpu}     # the few files worth keeping
out=$(mktemp -d /tmp/aitune-gpu.XXXX)
mkdir -p "$keep"
db=$out/elementwise.db
fails=0
results=$keep/checks.txt
: > "$results"
check() {   # check NAME CONDITION-EXIT-CODE DETAIL
    local line
    if [ "$2" = 0 ]; then line="PASS $1${3:+: $3}"; else line="FAIL $1${3:+: $3}"; fails=$((fails + 1)); fi
    echo "$line" | tee -a "$results"
}

build/aitune devices > "$out/devices.txt" 2>&1
check "aitune devices" $? "$(head -1 "$out/devices.txt")"

python3 bench/peers_elementwise.py > "$out/peers.json" 2> "$out/peers.err"
check "PyTorch peer ran" $? "$(cat "$out/peers.json")"

t0=$(date +%s)
build/aitune sweep specs/elementwise.yaml --db "$db" --quiet > "$out/sweep.txt" 2> "$out/sweep.err"
rc=$?
t1=$(date +%s)
check "aitune sweep specs/elementwise.yaml completes" $rc "$((t1 - t0)) s; $(tail -1 "$out/sweep.err")"
build/aitune show --db "$db" --json > "$out/winners.json"

# winner GB/s vs the bar and vs the peer, from the registry
read_winner() {  # op dtype bucket -> "gbps median_us"
    python3 - "$out/winners.json" "$1" "$2" "$3" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
for r in rows:
    if (r["op"], r["dtype"], r["bucket"]) == tuple(sys.argv[2:5]):
        print(r["gbps"], r["median_us"]); break
else:
    print("0 0")
PY
}
peer() { python3 -c "import json,sys; print(json.load(open('$out/peers.json')).get('$1', 0))" 2>/dev/null || echo 0; }
ge() { python3 -c "import sys; sys.exit(0 if float('$1') >= float('$2') else 1)"; }
ratio() { python3 -c "print('%.3f' % (float('$1') / float('$2') if float('$2') else 0))"; }

read -r axpy_gbps axpy_us < <(read_winner axpy f32 'n=2^26')
ge "$axpy_gbps" 2900
check "axpy f32 n=2^26 >= 2900 GB/s" $? "$axpy_gbps GB/s ($axpy_us us); x$(ratio "$axpy_gbps" "$(peer 'copy_f32_2^26')") vs torch copy_, x$(ratio "$axpy_gbps" "$(peer 'axpy_f32_2^26')") vs torch add_"
read -r cast_gbps cast_us < <(read_winner cast 'f32>bf16' 'n=2^28')
ge "$cast_gbps" 2900
check "cast f32>bf16 n=2^28 >= 2900 GB/s" $? "$cast_gbps GB/s ($cast_us us); x$(ratio "$cast_gbps" "$(peer 'cast_f32_bf16_2^28')") vs torch copy_ (f32->bf16)"

# emitted .cu == swept cubin, bit for bit
emit_check() {  # op dtype n mode fn
    local op=$1 dt=$2 n=$3 mode=$4 tag=$5
    build/aitune emit "$op" --arch sm_90 --dtype "$dt" --shape "$n" --db "$db" -o "$out/$tag.cu" 2>> "$out/emit.err" || return 1
    nvcc -gencode=arch=compute_90a,code=sm_90a -c "$out/$tag.cu" -o "$out/$tag.o" 2>> "$out/emit.err" || return 1
    nvcc -gencode=arch=compute_90a,code=sm_90a -D"$mode" tests/gpu/emit_check.cu "$out/$tag.o" -lcuda -o "$out/$tag.check" 2>> "$out/emit.err" || return 1
    python3 - "$db" "$op" "$dt" "$n" "$out/$tag.cubin" > "$out/$tag.args" <<'PY' || return 1
import json, sqlite3, sys
db, op, dt, n, path = sys.argv[1:6]
n = int(n)
con = sqlite3.connect(db)
lo = 1
while lo * 2 <= n: lo *= 2
row = con.execute("select w.launch, c.cubin from winners w join cubins c on c.hash = w.cubin "
                  "where w.op=? and w.dtype=? and w.lo=?", (op, dt, str(lo))).fetchone()
launch = json.loads(row[0])
open(path, "wb").write(row[1])
env = {"n": n, "cdiv": lambda a, b: (a + b - 1) // b, "min": min, "max": max}
g = eval(launch["grid"][0], {}, env)
b = eval(launch["block"][0], {}, env)
print(path, launch["kernel"], n, g, b)
PY
    "$out/$tag.check" $(cat "$out/$tag.args") >> "$out/emit.txt" 2>&1
}
emit_check axpy f32 67108864 MODE_AXPY_F32 axpy_f32
check "emitted axpy f32 n=2^26 is bit-identical to the swept kernel" $? "$(tail -1 "$out/emit.txt" 2>/dev/null)"
emit_check cast 'f32>bf16' 268435456 MODE_CAST_F32_BF16 cast_f32_bf16
check "emitted cast f32>bf16 n=2^28 is bit-identical to the swept kernel" $? "$(tail -1 "$out/emit.txt" 2>/dev/null)"

build/aitune show --db "$db" > "$out/show.txt"
cp "$out/show.txt" "$out/winners.json" "$out/sweep.err" "$out/peers.json" "$out/emit.txt" "$keep/" 2>/dev/null
echo "$fails checks failed"
[ "$fails" = 0 ]
