"""Where a sweep's time went, bucket by bucket, from its trace (AITUNE_TRACE=FILE
aitune sweep ...; bench/range_scan.sh keeps one as OUT/trace.txt).

    python3 bench/trace_split.py TRACE

One row per bucket, in the order each GPU's lane took them, in seconds:
  wall      the bucket from its start to its winner (its share: what the
            budget allowed it, "-" without a budget)
  vendor    cuBLASLt timed at the bucket's own size
  search    the bucket's own search: its candidates loaded, verified and timed
            (the rest of its search time is waiting for compiles, in "other")
  probes    hold's and the split's races at other sizes: how many, then the
            time setting each size's task up (inputs, reference), loading and
            verifying the slots (and the vendor, raced beside them), racing
            them, and the vendor's bar after (recorded; or, not raced, timed)
  parts     the parts' own searches: how many, and their time
  polish    the parts' winners polished over them (sweep_polish.h): their
            compiles and races (not in probes)
  other     what is left: compile waits, the race at the bucket's own size,
            the registry
A line sums the columns over the buckets; the last counts the probes' vendor
bars by how they were taken (raced beside the slots, apart, none; "-": a trace
from before bars were raced)."""
import re
import sys

LINE = re.compile(r"^(\d+\.\d+) gpu=(\d+) (.*)$")


def parse(path):
    lanes = {}
    try:
        lines = open(path).readlines()
    except OSError as e:
        sys.exit("%s: %s" % (path, e.strerror))
    for raw in lines:
        m = LINE.match(raw.rstrip("\n"))
        if m:
            lanes.setdefault(int(m.group(2)), []).append((float(m.group(1)), m.group(3)))
    return lanes


def buckets(events):
    """Each bucket's events, from its start line to its end line."""
    out, cur = [], None
    for t, text in events:
        w = text.split()
        if text.startswith("bucket start "):
            share = re.search(r"share=([\d.]+)", text)
            cur = {"key": " ".join(w[2:5]), "t0": t, "share": float(share.group(1)) if share else 0.0,
                   "wall": None, "vendor": 0.0, "timed": [], "probes": [], "parts": [], "polish": []}
        elif cur is None:
            continue
        elif text.startswith("bucket end "):
            cur["wall"] = float(w[-1])
            out.append(cur)
            cur = None
        elif w[0] == "vendor":
            cur["vendor"] += float(w[-1])
        elif w[0] == "timed":
            s = float(re.search(r"start=([\d.]+)", text).group(1))
            e = float(re.search(r"end=([\d.]+)", text).group(1))
            cur["timed"].append((s, e))
        elif w[0] == "probe":
            phases = dict(re.findall(r"(task|load|race|vendor)=([\d.]+)", text))
            bar = re.search(r" bar=(\w+) ", text)
            cur["probes"].append(dict({k: float(v) for k, v in phases.items()}, t=t, bar=bar.group(1) if bar else "-"))
        elif text.startswith("part search "):
            cur["parts"].append((t - float(w[-1]), t))
        elif w[0] == "polish" and " raced in " in text:
            d = float(re.search(r" raced in ([\d.]+) s ", text).group(1))
            cur["polish"].append((t - d, t))
    return out


PHASES = ("task", "load", "race", "vendor")


def row(b):
    inside = lambda s, e: any(a <= s and e <= z for a, z in b["parts"])
    polished = lambda t: any(a <= t <= z for a, z in b["polish"])
    probes = [p for p in b["probes"] if not polished(p["t"])]
    r = {"wall": b["wall"], "vendor": b["vendor"],
         "search": sum(e - s for s, e in b["timed"] if not inside(s, e)),
         "nprobes": len(probes), "nparts": len(b["parts"]), "parts": sum(z - a for a, z in b["parts"]),
         "npolish": len(b["polish"]), "polish": sum(z - a for a, z in b["polish"])}
    for k in PHASES:
        r["p_" + k] = sum(p.get(k, 0.0) for p in probes)
    r["other"] = (r["wall"] - r["vendor"] - r["search"] - sum(r["p_" + k] for k in PHASES) - r["parts"]
                  - r["polish"])
    return r


def line(label, share, r):
    return "%-44s %7.1f %6s %6.1f %6.1f  %3d %5.1f/%5.1f/%5.1f/%5.1f %12s %9s %6.1f" % (
        label, r["wall"], share, r["vendor"], r["search"], r["nprobes"], r["p_task"], r["p_load"], r["p_race"],
        r["p_vendor"], "%d %.1f" % (r["nparts"], r["parts"]), "%d %.1f" % (r["npolish"], r["polish"]), r["other"])


def main(path):
    lanes = parse(path)
    if not lanes:
        sys.exit("%s: no trace lines (a sweep run with AITUNE_TRACE=%s writes them)" % (path, path))
    print("%-44s %7s %6s %6s %6s  %-34s %9s %9s %6s" % ("bucket", "wall", "share", "vendor", "search",
                                                        "probes: n task/load/race/vendor", "parts", "polish", "other"))
    tot = {}
    for gpu in sorted(lanes):
        for b in buckets(lanes[gpu]):
            r = row(b)
            label = ("gpu%d " % gpu if len(lanes) > 1 else "") + b["key"][:40]
            print(line(label, "%.1f" % b["share"] if b["share"] else "-", r))
            for k, v in r.items():
                tot[k] = tot.get(k, 0) + v
    if tot:
        print(line("all buckets", "", tot))
    # How hold's vendor bars were taken (sweep_probe.h): raced beside the slots, apart, none.
    bars = {}
    for gpu in lanes:
        for b in buckets(lanes[gpu]):
            for p in b["probes"]:
                bars[p["bar"]] = bars.get(p["bar"], 0) + 1
    if bars:
        print("vendor bars at the probes: " + ", ".join("%d %s" % (n, k) for k, n in sorted(bars.items())))


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        sys.exit(__doc__)
    main(sys.argv[1])
