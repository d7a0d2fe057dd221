#!/usr/bin/env bash
# The vendor in the registry, without a GPU: a fake sweep's GEMM registry
# given the vendor's (cuBLASLt's) times and a bucket the vendor holds.
# show, why, report, export, merge and status say x vendor and count the
# vendor's buckets; an old registry (schema 4) reads without vendor rows
# and is migrated by a write; lookup answers the vendor's bucket; emit
# writes a file whose dispatcher calls cuBLASLt there, which nvcc builds and
# links with -lcublasLt; a vendor row for a problem the vendor does not
# serve is refused as bad input.
. "$(dirname "$0")/lib.sh"

DB=$T/g.db
spec g.yaml <<'EOF'
name: g
max_evals: 2
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [mma]
    shapes: {m: {values: [16, 64]}, n: {values: [256]}, k: {values: [256]}}
EOF
fake_sweep ok "$DB" "$T/g.yaml"
expect_eq "a fake GEMM sweep exits 0" "$RC" 0 || show_last
B16='m=2^4,n=2^8,k=2^8'
B64='m=2^6,n=2^8,k=2^8'
expect_eq "two winners" "$(sql "$DB" "select count(*) from winners")" 2
expect_eq "the registry is schema 5" "$(sql "$DB" "select value from meta where key = 'schema_version'")" 5
w16=$(sql "$DB" "select median_us from winners where bucket = '$B16'")

# The vendor twice as slow as the m=16 winner, at its shape, same hardware and timing.
sql "$DB" "insert into vendor_times (op, arch, dtype, bucket, shape, hw, timing, library, algo, status, median_us, min_us,
           max_us, spread, samples, device, run)
           select op, arch, dtype, bucket, shape, hw, 'flush', 'cuBLASLt 130100', 'algo 66 tile 20', 'ok',
                  2 * median_us, 2 * median_us, 2 * median_us, 0.01, 20, device, run from winners where bucket = '$B16'" >/dev/null
expect_exit 0 "show" "$AITUNE" show --db "$DB"
expect_stdout "^op .* vs dflt +x vendor +template config" "show has an x vendor column"
expect_stdout "^gemm_nt +sm_90 +bf16 +m=2\^4,n=2\^8,k=2\^8 .* 2\.00x +gemm_nt/mma" "the m=16 winner is 2.00x the vendor"
expect_stdout "^gemm_nt +sm_90 +bf16 +m=2\^6,n=2\^8,k=2\^8 .* - +gemm_nt/mma" "m=64, where the vendor was not timed: -"
expect_exit 0 "show --json" "$AITUNE" show --db "$DB" --json
got=$(python3 -c 'import json,sys; w={x["bucket"]: x for x in json.load(sys.stdin)}
a, b = w["m=2^4,n=2^8,k=2^8"], w["m=2^6,n=2^8,k=2^8"]
print(a["x_vendor"], round(a["vendor_us"] / a["median_us"], 3), b["x_vendor"], b["vendor_us"])' <"$T/out" 2>&1)
expect_eq "show --json: x_vendor and vendor_us, null where not timed" "$got" "2.0 2.0 None None"

expect_exit 0 "why --shape 16,256,256" "$AITUNE" why gemm_nt --dtype bf16 --shape 16,256,256 --db "$DB"
expect_stdout "^  2\.00x the vendor \(cuBLASLt: [0-9.]+ us at the same shape, timed the same way\)" "why gives x vendor"
expect_stdout "^the vendor \(cuBLASLt 130100\), timed as the candidates:" "why lists the vendor's measurements"
expect_stdout '^ +[0-9.]+ us +1\.0% +at \{"m":16,"n":256,"k":256\}  algo 66 tile 20' "with shape and algorithm"
expect_exit 0 "why --shape 64,256,256" "$AITUNE" why gemm_nt --dtype bf16 --shape 64,256,256 --db "$DB"
expect_no_stdout "vendor" "where the vendor was not timed, why does not mention it"

expect_exit 0 "report" "$AITUNE" report -o "$T/r.html" --db "$DB"
expect_true "report plots x vendor" grep -q '<svg class="vendor"' "$T/r.html"
expect_true "and has the column" grep -q '<th>x vendor</th>' "$T/r.html"
expect_true "with 2.00x for m=16" grep -q '<td>2.00x</td>' "$T/r.html"

expect_exit 0 "export --format json --what vendor" "$AITUNE" export --format json --what vendor --db "$DB"
got=$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d), d[0]["shape"]["m"], d[0]["timing"], d[0]["library"])' \
      <"$T/out" 2>&1)
expect_eq "one vendor row, its shape as JSON" "$got" "1 16 flush cuBLASLt 130100"
expect_exit 0 "export --format json (every table)" "$AITUNE" export --format json --db "$DB"
expect_eq "the vendor table is in it" "$(python3 -c 'import json,sys; print(len(json.load(sys.stdin)["vendor"]))' <"$T/out" 2>&1)" 1
expect_exit 0 "export --format csv --what vendor" "$AITUNE" export --format csv --what vendor --db "$DB"
expect_stdout "^op,arch,dtype,bucket,shape,hw,timing,library,algo,status,median_us" "csv has the header"

expect_exit 0 "merge" "$AITUNE" merge "$T/m.db" "$DB"
expect_stdout "\+1 vendor times" "merge carries the vendor row"
expect_eq "with the hardware it was measured on" "$(sql "$T/m.db" "select count(*) from vendor_times v join devices d on d.hw = v.hw")" 1
expect_exit 0 "merge again" "$AITUNE" merge "$T/m.db" "$DB"
expect_stdout "\+0 vendor times" "adds nothing"

# An old registry: schema 4, no vendor table.
cp "$DB" "$T/old.db"
sql "$T/old.db" "drop table vendor_times; update meta set value = '4' where key = 'schema_version'" >/dev/null
expect_exit 0 "show reads a schema-4 registry" "$AITUNE" show --db "$T/old.db"
expect_stdout "^gemm_nt .* - +gemm_nt/mma" "with no x vendor"
expect_eq "and leaves it at schema 4" "$(sql "$T/old.db" "select value from meta where key = 'schema_version'")" 4
AITUNE_WORKER=$FAKE run "$AITUNE" status --db "$T/old.db"
expect_eq "status (which opens for writing) migrates it to 5" \
    "$(sql "$T/old.db" "select value || ' ' || (select count(*) from sqlite_master where name = 'vendor_times') from meta where key = 'schema_version'")" "5 1"

# The vendor holds the m=64 bucket (what a sweep writes when no template beats it).
PLAN='{"v":2,"kernel":"cublaslt","dims":["m","n","k"],"args":[{"name":"A","role":"in","dtype":"bf16"},{"name":"B","role":"in","dtype":"bf16"},{"name":"D","role":"out","dtype":"bf16"},{"name":"m","role":"dim"},{"name":"n","role":"dim"},{"name":"k","role":"dim"}],"grid":["1","1","1"],"block":["1","1","1"],"cluster":["1","1","1"],"smem":"0","params":[{"kind":"ptr","arg":"A"},{"kind":"ptr","arg":"B"},{"kind":"ptr","arg":"D"},{"kind":"dim","expr":"m"},{"kind":"dim","expr":"n"},{"kind":"dim","expr":"k"},{"kind":"workspace","size":"33554432","zero":"0"}]}'
sql "$DB" "update winners set template = 'vendor/cublaslt', config = '{}', cubin = NULL, launch = '$PLAN'
           where bucket = '$B64'" >/dev/null
AITUNE_WORKER=$FAKE run "$AITUNE" status --db "$DB"
expect_stdout "^the vendor \(cuBLASLt\) holds 1 bucket or part: no template beat it there" "status counts the vendor's bucket"
AITUNE_WORKER=$FAKE run "$AITUNE" status --db "$DB" --json
expect_eq "status --json: vendor 1" "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["vendor"])' <"$T/out" 2>&1)" 1
expect_exit 0 "lookup m=64" "$AITUNE" lookup gemm_nt --arch sm_90 --dtype bf16 --shape 64,256,256 --db "$DB" --json
expect_eq "answers the vendor" "$(python3 -c 'import json,sys; c=json.load(sys.stdin); print(c["level"], c["template"], c["config"])' <"$T/out" 2>&1)" \
    "exact vendor/cublaslt {}"
expect_exit 0 "why on the vendor's bucket" "$AITUNE" why gemm_nt --dtype bf16 --shape 64,256,256 --db "$DB"
expect_stdout "^  the vendor itself \(cuBLASLt\): no template beat it here" "why says the vendor holds it"

expect_exit 0 "emit the whole op" "$AITUNE" emit gemm_nt --dtype bf16 --db "$DB" -o "$T/whole.cu"
expect_true "its header says to link cuBLASLt" grep -q '^// Buckets the vendor holds call cuBLASLt: link with -lcublasLt.$' "$T/whole.cu"
expect_true "the vendor's bucket calls cuBLASLt" grep -q 'return aitune_vendor_gemm(0, CUDA_R_16BF, CUDA_R_16BF, A, B, D, m, n, k, ws, stream);' "$T/whole.cu"
expect_eq "one kernel's source (the m=16 winner's), none for the vendor" "$(grep -c '^namespace aitune_k' "$T/whole.cu")" 1
expect_exit 0 "emit --shape 64,256,256 (the vendor's)" "$AITUNE" emit gemm_nt --arch sm_90 --dtype bf16 --shape 64,256,256 --db "$DB" -o "$T/one.cu"
expect_true "a file with no kernel, calling cuBLASLt" sh -c "! grep -q '^namespace aitune_k' '$T/one.cu' && grep -q 'aitune_vendor_gemm(0,' '$T/one.cu'"
expect_true "its workspace is 32 MiB" grep -q 'return (size_t)(33554432LL);' "$T/one.cu"
if command -v nvcc >/dev/null 2>&1; then
    for f in whole one; do
        run nvcc -gencode=arch=compute_90a,code=sm_90a -Xcompiler -Wall -shared -Xcompiler -fPIC -o "$T/$f.so" "$T/$f.cu" -lcublasLt
        expect_eq "nvcc builds the emitted $f.cu and links it with -lcublasLt" "$RC" 0 || show_last
        expect_true "$f.so needs libcublasLt" sh -c "readelf -d '$T/$f.so' | grep -q 'NEEDED.*libcublasLt'"
        expect_eq "no compiler warning for $f.cu" "$(grep -c 'warning' "$T/err")" 0 || show_last
    done
else
    skip "nvcc builds the emitted file with a vendor bucket: no nvcc"
fi

# Bad input: the vendor named for a problem it does not serve.
cp "$DB" "$T/bad.db"
sql "$T/bad.db" "update winners set launch = replace(launch, '33554432', '16') where bucket = '$B64'" >/dev/null
expect_exit 3 "emit refuses a vendor bucket whose workspace is not the vendor's" \
    "$AITUNE" emit gemm_nt --dtype bf16 --db "$T/bad.db" -o "$T/bad.cu"
expect_stderr "names the vendor, which serves no such problem" "and says why"
expect_true "and writes no file" test ! -e "$T/bad.cu"
done_testing
