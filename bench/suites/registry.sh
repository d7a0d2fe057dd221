# bench/suites/registry.sh: how big a full specs/memory.yaml registry is, and
# that every kernel it kept still launches (issue 13).
about="registry size after a full specs/memory.yaml sweep and after aitune gc; every stored kernel launchable"
spec=specs/memory.yaml
peers="the same registry before gc (and 578 MB, every candidate's cubin kept, before losers were dropped)"
metric="MB on disk; winners, finalists and defaults with their kernel; aitune check and retune --all from stored cubins"
bar="<= 50 MB; every winner, finalist and default keeps its kernel; 0 kernels compiled again"
gpus=1
minutes=9
command="OUT=OUT bench/registry_size.sh"
needs="$spec bench/registry_size.sh"

measure() { local out=$1; shift; OUT=$out bench/registry_size.sh "$@"; }

rows() {
    python3 - "$1/summary.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"\| on disk \| ([0-9.]+) MB \| ([0-9.]+) MB \|", text)
if m:
    print("\t".join(["specs/memory.yaml registry on disk", "%s MB after the sweep, %s MB after gc" % m.groups(),
                     "", "", "<= 50 MB", "yes" if float(m.group(1)) <= 50 else "no"]))
for what in ("winners", "finalists", "defaults"):
    m = re.search(r"\| %s with their kernel \| (\d+) of (\d+) \| (\d+) of (\d+) \|" % what, text)
    if m:
        a, b, c, d = m.groups()
        print("\t".join(["%s with their kernel" % what, "%s of %s (after gc %s of %s)" % (a, b, c, d), "", "",
                         "all", "yes" if a == b and c == d else "no"]))
m = re.search(r"winners \(aitune check\): (.*)", text)
if m:
    k = re.search(r"(\d+) kernels not from the stored cubins", m.group(1))
    print("\t".join(["aitune check from stored cubins", m.group(1).strip(), "", "", "0 compiled again",
                     "" if not k else "yes" if k.group(1) == "0" else "no"]))
PY
}
