# bench/suites/overhead.sh: what the runtime costs an application: libaitune's
# open, lookup and launch (tests/gpu/launch.sh, which also checks that its
# launches give the emitted file's bits), and the Python package's host
# time per call (bench/host_overhead.py).
about="runtime overhead: aitune_open, aitune_lookup, aitune_launch over cuLaunchKernel, and Python's host time per call against torch.mm"
spec="tests/gpu/launch.yaml (launch.sh); bench/rt_overhead.c's synthetic registry of 9960 winners"
peers="a raw cuLaunchKernel of the same kernel; torch.mm (bench/host_overhead.py), same call"
metric="ms per aitune_open, ns per exact lookup at 10k winners, us added per launch, us of host time per Python call"
bar="open <= 5 ms; exact lookup <= 100 ns; aitune_launch <= 1 us over cuLaunchKernel; Python host time <= 10 us and <= 0.5x torch.mm"
gpus=1
minutes=4
command="make build/examples/launch build/bench/rt_overhead; tests/gpu/launch.sh OUT; python3 bench/host_overhead.py --registry DB"
needs="tests/gpu/launch.sh tests/gpu/launch.yaml bench/rt_overhead.c bench/host_overhead.py"

measure() {
    local out=$1
    shift
    make -s build/examples/launch build/bench/rt_overhead || return 1
    tests/gpu/launch.sh "$out" | tee "$out/launch.txt"
    local rc=${PIPESTATUS[0]}
    case " $* " in
        *" --registry "*|*" --registry="*)
            OUT=$out "${AITUNE_PYTHON:-python3}" bench/host_overhead.py "$@" | tee "$out/host-overhead.txt"
            [ "${PIPESTATUS[0]}" = 0 ] || rc=1 ;;
        *) echo "host_overhead.py not run: it needs a registry tuned at 1 x 4096 x 4096 (bench/run overhead -- --registry DB)" ;;
    esac
    return "$rc"
}

rows() {
    python3 - "$1/launch.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
def grab(pat):
    m = re.search(pat, text)
    return float(m.group(1)) if m else None
def row(name, value, unit, peer, lo):
    if value is None:
        return
    print("\t".join([name, "%g %s" % (value, unit), peer, "", "<= %g %s" % (lo, unit), "yes" if value <= lo else "no"]))
n = re.search(r"winners in the registry: (\d+)", text)
at = " at %s winners" % n.group(1) if n else ""
row("aitune_open" + at, grab(r"aitune_open: ([0-9.]+) ms"), "ms", "", 5)
row("aitune_lookup, exact" + at, grab(r"aitune_lookup \(exact\): ([0-9.]+) ns"), "ns", "", 100)
m = re.search(r"cuLaunchKernel ([0-9.]+) us, aitune_launch ([0-9.]+) us.*adds ([0-9.]+) us", text)
if m:
    row("aitune_launch over cuLaunchKernel (softmax)", float(m.group(3)), "us",
        "cuLaunchKernel %s us, aitune_launch %s us of host time" % (m.group(1), m.group(2)), 1)
PY
    # host_overhead.py's bar line: "bar: aitune.nn.Linear.forward 5.16 us
    # (<= 10: yes), 3.49x torch.mm (<= 0.5: no)".
    [ -f "$1/host-overhead.txt" ] && sed -n 's/^bar: aitune.nn.Linear.forward \([0-9.]*\) us (<= 10: \([a-z]*\)), \([0-9.]*\)x torch.mm (<= 0.5: \([a-z]*\))$/\1 \2 \3 \4/p' \
        "$1/host-overhead.txt" | while read -r us ok10 x okx; do
        printf 'host time per call, 1 x 4096 x 4096 (aitune.nn.Linear)\t%s us\t\t%sx torch.mm\t<= 10 us, <= 0.5x torch.mm\t%s\n' \
            "$us" "$x" "$([ "$ok10" = yes ] && [ "$okx" = yes ] && echo yes || echo no)"
    done
    return 0
}
