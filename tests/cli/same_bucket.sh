#!/usr/bin/env bash
# Two tasks on one bucket: the second names only one of the op's templates.
# Its race must include the faster configs the first task found, so the
# stored winner is the bucket's fastest measurement whichever template the
# second task names (the fake worker's times are a hash of the kernel name,
# so one of the two orders below puts the fastest config outside the second
# task's template).
. "$(dirname "$0")/lib.sh"

for second in hold stream; do
    spec "two_$second.yaml" <<EOF
name: two
search: random
max_evals: 4
tasks:
  - op: softmax
    dtypes: [bf16]
    shapes:
      rows: {values: [64]}
      cols: {values: [1000]}
  - op: softmax
    dtypes: [bf16]
    templates: [$second]
    shapes:
      rows: {values: [64]}
      cols: {values: [1000]}
EOF
    DB=$T/two_$second.db
    # The first task is the same both times: the second sweep takes its
    # kernels from the first's cache (--keep-cubins, cubin_seed).
    [ "$second" = stream ] && cubin_seed "$T/two_hold.db" "$DB"
    fake_sweep ok "$DB" "$T/two_$second.yaml" --keep-cubins
    expect_eq "fake sweep with a second task naming [$second] exits 0" "$RC" 0 || show_last
    n=$(sql "$DB" "select count(distinct template) from measurements where status = 'ok'")
    expect_eq "both register families were measured ([$second] second)" "$n" 2
    best=$(sql "$DB" "select template || ' ' || config from measurements where status = 'ok' order by median_us limit 1")
    win=$(sql "$DB" "select template || ' ' || config from winners")
    expect_eq "the winner is the bucket's fastest config, not only [$second]'s ($best)" "$win" "$best"
done

# An earlier measurement whose config no longer builds (its template changed
# since) is dropped from the race with a warning; the winner stays a real one.
DB=$T/two_stream.db
sql "$DB" "insert into measurements (op, template, arch, dtype, bucket, shape, config, config_hash, status, median_us,
           spread, device, run) select op, template, arch, dtype, bucket, shape, '{\"bogus\":1}', 'ffffffffffffffff',
           'ok', 0.5, 0, device, run from measurements where status = 'ok' limit 1" >/dev/null
undecide "$DB"    # as a template change would (src/sweep_resume.h): the bucket decided again
fake_sweep ok "$DB" "$T/two_stream.yaml"
expect_eq "a sweep whose fastest earlier config no longer builds exits 0" "$RC" 0 || show_last
expect_stderr "finalist softmax/.* \\{\"bogus\":1\\} dropped" "the stale finalist is dropped with a warning"
expect_eq "the winner is not the stale config" "$(sql "$DB" "select config like '%bogus%' from winners")" 0
expect_eq "the winner has a cubin and a launch" "$(sql "$DB" "select length(cubin) = 16 and launch like '%grid%' from winners")" 1
done_testing
