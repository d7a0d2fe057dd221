"""Warp stall samples of one kernel (Nsight Compute `--page source --csv
--print-source sass`) summed by opcode and by reason, and its top
instructions: python3 stalls.py o1_sass.csv.gz"""
import collections, csv, gzip, sys


def main(path):
    rows = list(csv.reader(gzip.open(path, "rt") if path.endswith(".gz") else open(path)))
    hdr, data = rows[1], rows[2:]
    i_src, i_all = hdr.index("Source"), hdr.index("Warp Stall Sampling (All Samples)")
    reasons = [(j, h) for j, h in enumerate(hdr) if h.startswith("stall_") and "Not Issued" not in h]
    total, by_op, by_reason, each = 0, collections.Counter(), collections.Counter(), []
    for r in data:
        if not r[i_all].strip().isdigit():
            continue
        s, src = int(r[i_all]), r[i_src].strip()
        words = src.split()
        op = (words[1] if words and words[0].startswith("@") else words[0] if words else "").split(".")[0]
        total += s
        by_op[op] += s
        for j, h in reasons:
            if r[j].strip().isdigit():
                by_reason[h[6:]] += int(r[j])
        each.append((s, src))
    print("samples", total)
    print("by opcode:", ", ".join("%s %.1f%%" % (k, 100 * c / total) for k, c in by_op.most_common(12)))
    print("by reason:", ", ".join("%s %.1f%%" % (k, 100 * c / total) for k, c in by_reason.most_common(8)))
    for s, src in sorted(each, key=lambda x: -x[0])[:12]:
        print("  %5.1f%% %s" % (100 * s / total, src[:90]))


if __name__ == "__main__":
    main(sys.argv[1])
