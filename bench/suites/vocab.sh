# bench/suites/vocab.sh: rows at vocabulary width (issue 33): softmax and
# rmsnorm over 4096 rows of every width from 32000 to 256000 (a range),
# scanned at five vocabulary widths and four odd ones beside them, the peeled
# kernels verified at odd widths for every row op and dtype, and compared
# with PyTorch eager in the same call.
about="softmax and rmsnorm over 4096 rows at vocabulary widths (32000 .. 256000), against PyTorch eager"
spec=bench/rows_vocab.yaml
peers="PyTorch eager (torch.softmax, F.rms_norm), bench/rows_vocab.py, timed the same way (L2 flushed), same call"
metric="GB/s of the registry's answer at 32000, 32001, 50257, 100352, 100353, 128256, 128257, 255999 and 256000 columns; x eager"
bar=">= 2700 GB/s and >= 1.3x PyTorch eager"
gpus=1
minutes=5
command="bench/rows_vocab.sh OUT"
needs="$spec bench/rows_vocab_scan.yaml bench/rows_vocab_odd.yaml bench/rows_vocab_rpb.yaml bench/rows_vocab.py bench/rows_vocab.sh"

measure() { bench/rows_vocab.sh "$@"; }

rows() {
    python3 - "$1/rows_table.txt" <<'PY'
import sys
for line in open(sys.argv[1]):
    f = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(f) != 8 or f[0] in ("op", "---") or f[2] == "-":
        continue
    op, shape, us, gbps, eus, egbps, x, tmpl = f
    ok = float(gbps) >= 2700 and float(x.rstrip("x")) >= 1.3
    print("\t".join(["%s bf16 %s" % (op, shape), "%s GB/s (%s us, %s)" % (gbps, us, tmpl), "eager %s GB/s" % egbps, "%s eager" % x,
                     ">= 2700 GB/s, >= 1.3x eager", "yes" if ok else "no"]))
PY
}
