#!/usr/bin/env bash
# aitune report: a self-contained HTML page (no scripts, nothing fetched),
# rendered by a real headless browser (chromium-headless-shell, `make
# deps-browser`; without one that check is skipped and says so);
# the screenshot must show the plots: the speedup bars, the bandwidth bars
# and the convergence lines, found by their colors in the PNG.
. "$(dirname "$0")/lib.sh"

axpy_spec two.yaml 6 7
DB=$T/r.db
seed_db "$DB" || { fail "seed the cubin cache"; exit 1; }
fake_sweep ok "$DB" "$T/two.yaml"
expect_eq "a fake sweep of two buckets" "$RC" 0 || show_last
# A hostile config string must come out escaped.
sqlite3 "$DB" "UPDATE winners SET config = '{\"block\":64,\"x\":\"</code><script>alert(1)</script>\"}' WHERE bucket = 'n=2^7'"

expect_exit 0 "report -o FILE" "$AITUNE" report -o "$T/report.html" --db "$DB"
H=$T/report.html
expect_true "the page is HTML" grep -q '^<!DOCTYPE html>' "$H"
expect_eq "three plots per op (speedup, bandwidth, convergence)" "$(grep -o '<svg class="[a-z]*"' "$H" | tr '\n' ' ')" \
    '<svg class="speedup" <svg class="bandwidth" <svg class="convergence" '
expect_eq "one bar per bucket in each bar plot" "$(grep -o '<rect class="bar"' "$H" | wc -l)" 4
expect_eq "one convergence line per bucket" "$(grep -o '<polyline class="series"' "$H" | wc -l)" 2
expect_eq "no script, nothing loaded from elsewhere" "$(grep -Eic '<script|src=|href=|@import|url\(' "$H")" 0
expect_true "registry strings are escaped" grep -q '&lt;/code&gt;&lt;script&gt;' "$H"
expect_exit 0 "report --ceiling" "$AITUNE" report -o "$T/c.html" --ceiling 3000 --db "$DB"
expect_true "the ceiling is drawn" grep -q 'ceiling 3000 GB/s' "$T/c.html"

BROWSER=$(command -v chromium-headless-shell || command -v chromium || command -v chromium-browser || true)
if [ -z "$BROWSER" ]; then
    skip "report screenshot: no headless browser (make deps-browser installs chromium-headless-shell)"
else
    # --no-sandbox: the tests may run as root.
    run "$BROWSER" --no-sandbox --disable-gpu --hide-scrollbars --window-size=1000,1400 \
        --screenshot="$T/shot.png" "file://$H"
    if [ -s "$T/shot.png" ]; then ok "the browser rendered a screenshot"; else fail "no screenshot"; show_last; fi
    # Count the pixels of each plot's color in the PNG (decoded here: zlib
    # and the five PNG filters, no imaging library needed).
    got=$(python3 - "$T/shot.png" <<'EOF'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat = 8, b""
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
assert depth == 8 and ctype in (2, 6), (depth, ctype)
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
prev, rows, i = bytearray(stride), [], 0
for y in range(h):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b, c = prev[x], prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line)
    prev = line
def count(rgb):
    n = 0
    for line in rows:
        for x in range(0, stride, bpp):
            if all(abs(line[x + k] - rgb[k]) <= 8 for k in range(3)):
                n += 1
    return n
# speedup bars, bandwidth bars, the convergence lines (blue and orange)
print(count((0x1f, 0x77, 0xb4)) > 5000, count((0x2c, 0xa0, 0x2c)) > 5000, count((0xff, 0x7f, 0x0e)) > 200, w, h)
EOF
)
    expect_eq "the screenshot shows the speedup bars, the bandwidth bars and the convergence lines" "$got" "True True True 1000 1400"
    cp "$T/shot.png" "${AITUNE_REPORT_SHOT:-/dev/null}" 2>/dev/null || true
fi

# A compute-bound op (many flops per byte, like GEMM) is plotted in TFLOP/s.
cp "$DB" "$T/gemm.db"
sqlite3 "$T/gemm.db" "UPDATE winners SET tflops = 500, gbps = 20"
expect_exit 0 "report of a compute-bound op" "$AITUNE" report -o "$T/g.html" --db "$T/gemm.db"
expect_eq "compute-bound: speedup, TFLOP/s and convergence plots" "$(grep -o '<svg class="[a-z]*"' "$T/g.html" | tr '\n' ' ')" \
    '<svg class="speedup" <svg class="throughput" <svg class="convergence" '

expect_exit 2 "report without -o" "$AITUNE" report --db "$DB"
expect_stderr "^aitune: error: -o FILE is required" "asks for -o"
expect_exit 2 "report of an unknown op" "$AITUNE" report -o "$T/x.html" --op axpx --db "$DB"
expect_stderr "^aitune: error: unknown op 'axpx'" "names the unknown op"
expect_exit 2 "a bad --ceiling" "$AITUNE" report -o "$T/x.html" --ceiling fast --db "$DB"
expect_exit 1 "an unwritable output" "$AITUNE" report -o "$T/no/dir/r.html" --db "$DB"
expect_stderr "^aitune: error: cannot write '.*r.html': No such file or directory\$" "says why"
expect_stderr_lines 1 "one line"
expect_exit 3 "a missing registry" "$AITUNE" report -o "$T/x.html" --db "$T/none.db"
seed_db "$T/empty.db" || fail "seed the cubin cache"
expect_exit 0 "a registry with no winners" "$AITUNE" report -o "$T/e.html" --db "$T/empty.db"
expect_true "says nothing is tuned yet" grep -q "Nothing is tuned yet" "$T/e.html"
done_testing
