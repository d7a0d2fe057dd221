#!/usr/bin/env bash
# What the commands say about themselves is true (issue 31, "messages"):
# help fits in 100 columns, each usage line names the options its text
# documents, every command's help has an Exit line and each exit code seen
# here is one it lists; the no-GPU error names the command that needs it;
# window --plan works without a GPU; why says what cut a search; check's
# summary is check's and its counts add up.
. "$(dirname "$0")/lib.sh"

cmds=$("$AITUNE" help | awk '/^commands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{exit}')
[ "$(echo "$cmds" | wc -w)" -ge 19 ] && ok "help lists the commands" || fail "help lists $(echo "$cmds" | wc -w) commands"
long=$("$AITUNE" help | awk 'length > 100')
[ -z "$long" ] && ok "aitune help: every line within 100 columns" || fail "aitune help: a line over 100 columns: $long"
for c in $cmds; do
    "$AITUNE" help "$c" >"$T/h" 2>&1
    long=$(awk 'length > 100 {print length ": " $0}' "$T/h" | head -1)
    [ -z "$long" ] && ok "help $c: within 100 columns" || fail "help $c: $long"
    grep -q "^Exit: " "$T/h" && ok "help $c: has an Exit line" || fail "help $c: no Exit line"
    # The usage (up to the first blank line) and the options the text lists
    # ("  --name" or "  -x" at the start of a line) name the same options.
    usage=$(awk '/^$/{exit} {print}' "$T/h" | grep -o -- '[[( |]-\{1,2\}[a-z][a-z-]*' |
            grep -o -- '-\{1,2\}[a-z][a-z-]*' | sort -u | tr '\n' ' ')
    listed=$(grep -o -- '^  \+-\{1,2\}[a-z][a-z-]*' "$T/h" | tr -d ' ' | sort -u | tr '\n' ' ')
    if [ -n "$listed" ]; then
        expect_eq "help $c: the usage line names the options the text lists" "$usage" "$listed"
    fi
done

# docs/SPEC.md names every strategy in search/.
for f in "$ROOT"/search/*.lua; do
    s=$(basename "$f" .lua)
    [ "$s" = space ] && continue
    grep -q "\`$s\`" "$ROOT/docs/SPEC.md" && ok "docs/SPEC.md names strategy $s" || fail "docs/SPEC.md does not name strategy $s"
done

# exit CODE "what" CMD...: the code is CODE, and it is one that CMD's help lists.
exit_listed() {
    local want=$1 what=$2 cmd=$3
    shift 2
    run timeout 60 "$AITUNE" "$@"
    local listed
    listed=$("$AITUNE" help "$cmd" | sed -n '/^Exit: /,$p' | tr '\n' ' ' | grep -o '[^0-9]\(0\|1\|2\|3\|130\)[ ,;]' | tr -dc '0-9 \n' | tr -s ' ' '\n' | sort -u | tr '\n' ' ')
    if [ "$RC" = "$want" ] && echo " $listed " | grep -q " $RC "; then
        ok "$what: exit $RC, as help $cmd says"
    else
        fail "$what: exit $RC (want $want; help $cmd lists: $listed)"
        show_last 2
    fi
}

small_spec
axpy_spec capped.yaml 6 6 "max_evals: 4"
DB=$T/h.db
seed_db "$DB" || { fail "seed the cubin cache"; exit 1; }
ln -s "$T/nowhere" "$T/link"
exit_listed 2 "show with an unknown option" show --bogus
exit_listed 3 "show of a missing registry" show --db "$T/none.db"
exit_listed 3 "show with a missing peers file" show --peers "$T/none.jsonl" --db "$DB"
exit_listed 2 "help of no command" help nosuch
exit_listed 2 "status --gpu x" status --gpu x --db "$DB"
exit_listed 3 "status of a missing registry" status --db "$T/none.db"
exit_listed 3 "import of a missing file" import "$T/none.json" --db "$DB"
exit_listed 3 "gc of a missing registry" gc --db "$T/none.db"
exit_listed 2 "gc --winners-only --keep-finalists" gc --winners-only --keep-finalists --db "$DB"
exit_listed 1 "export -o a link" export --format json -o "$T/link" --db "$DB"
exit_listed 1 "report -o a link" report -o "$T/link" --db "$DB"
exit_listed 2 "emit -o a link" emit axpy --arch sm_90 --dtype f32 --shape 64 -o "$T/link" --db "$DB"
exit_listed 3 "lookup in a missing registry" lookup axpy --arch sm_90 --dtype f32 --shape 64 --db "$T/none.db"
exit_listed 2 "replay --seeds 0" replay "$T/none.tsv" --seeds 0
exit_listed 3 "replay of a missing landscape" replay "$T/none.tsv"
exit_listed 1 "replay export -o a link" replay export -o "$T/link" --db "$DB"
exit_listed 3 "merge of a missing input" merge "$T/out.db" "$T/none.db"
exit_listed 2 "merge with no input" merge "$T/out.db"
exit_listed 2 "compile -j x" compile "$T/small.yaml" -j x --db "$DB"
exit_listed 2 "list of no op" list nosuch
if has_gpu; then
    skip "the no-GPU messages: this machine has a GPU"
else
    exit_listed 1 "devices without a GPU" devices
    for c in sweep retune check; do
        exit_listed 1 "$c without a GPU" "$c" "$T/small.yaml" --db "$DB"
        expect_stderr "^aitune: error: $c needs a GPU" "$c's no-GPU error names $c"
    done
    exit_listed 1 "window without a GPU" window "$T/small.yaml" --budget 1m --db "$DB"
    expect_stderr "^aitune: error: window needs a GPU" "window's no-GPU error names window"
    # window --plan measures nothing: it plans without a GPU, for the GPU
    # of the registry's newest winner.
    fake_sweep ok "$DB" "$T/small.yaml"
    exit_listed 0 "window --plan without a GPU" window "$T/small.yaml" --budget 1m --plan --db "$DB"
    expect_stdout "^window: no GPU here .*planned for Fake GPU" "it says what it planned for"
    expect_stdout "^window: 0 buckets to work on" "the fresh winner leaves nothing to do"
    sqlite3 "$DB" "UPDATE runs SET sources = NULL"
    run "$AITUNE" window "$T/small.yaml" --budget 1m --plan --db "$DB"
    expect_stdout "^  1  stale    axpy +f32 +n=2\^6" "a winner whose template sources are unknown is stale"
    axpy_spec more.yaml 6 7
    run "$AITUNE" window "$T/more.yaml" --budget 1m --plan --db "$DB"
    expect_stdout "untuned +axpy +f32 +n=2\^7" "a bucket of the spec without a winner is untuned"
fi

# why: what cut the search, from the run that found the winner.
CDB=$T/capped.db
seed_db "$CDB"
fake_sweep ok "$CDB" "$T/capped.yaml"
run "$AITUNE" why axpy --dtype f32 --shape 64 --db "$CDB"
expect_stdout "not exhaustive: the spec's max_evals or search strategy cut the search" "why blames the spec's max_evals"
expect_no_stdout "budget or --max-evals" "not a budget or --max-evals it never had"
MDB=$T/maxevals.db
seed_db "$MDB"
fake_sweep ok "$MDB" "$T/small.yaml" --max-evals 3
run "$AITUNE" why axpy --dtype f32 --shape 64 --db "$MDB"
expect_stdout "not exhaustive: --max-evals on its command line cut the search" "why blames --max-evals when it was given"

# check's summary: check's, and ok + regressed = checked.
KDB=$T/check.db
seed_db "$KDB"
fake_sweep ok "$KDB" "$T/small.yaml"
run env AITUNE_WORKER="$FAKE" FAKE_MODE=wrong_verify:1 "$AITUNE" check "$T/small.yaml" --db "$KDB" --quiet
expect_stderr "^check: [0-9]+ candidates evaluated" "check's summary line says check, not sweep"
expect_stdout "^check: 1 winner checked: 0 ok, 1 regressed or failed" "check's counts add up"

done_testing
