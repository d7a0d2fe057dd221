# bench/suites/e2e.sh: a real model end to end (issue 32): Hugging Face
# transformers' LlamaForCausalLM with the Llama-3-8B configuration (random
# bf16 weights), decode steps in a CUDA graph, tokens per second, with and
# without aitune.patch, eager and under torch.compile (bench/llama_e2e.py).
# It needs a registry tuned for the model's shapes, made in a call of its
# own (a sweep of the model's spec takes longer than one call may; on 2x H200
# `--gpus 2 --budget 470s` fit one: 475 s, bench/RESULTS.md twelfth session):
#     python -m aitune tune CONFIG.json --batch 1:32 --prompt 128:2048 --exact-batch 1,8,32 --db llama.db
#     bench/run e2e -- --registry llama.db
# The spec tune writes holds the decode attention (attn_decode over batch
# 1..32 and caches 1..4096); alone, `--ops attn_decode --budget 110s` added
# it to a registry tuned before in 112 s (bench/RESULTS.md thirteenth session).
# On a host with two GPUs, `-- --registry llama.db --gpus 2` spreads the work
# over both (each ratio still from one process on one GPU): about 4 minutes
# instead of 10 (bench/llama_e2e.py --help).
# The Python is $AITUNE_PYTHON (default python3): PyTorch and transformers.
about="Llama-3-8B decode end to end, tokens/s: PyTorch, aitune.patch, torch.compile, torch.compile + aitune.patch"
spec="the model's shapes, tuned by python -m aitune tune into the registry given as -- --registry DB"
peers="the same model in PyTorch eager (cuBLAS) and under torch.compile, same process"
metric="tokens per second over the decode steps (batch 1, 8, 32; a 2048-token prefill); x torch.compile"
bar="batch 1 in a CUDA graph: compile + patch >= 1.15x compile; batch 8 >= 1.10x; batch 32 and prefill >= 1.00x; eager batch 1 >= 1.00x"
gpus=1
minutes=11
command="python3 bench/llama_e2e.py --registry DB"
needs="bench/llama_e2e.py"

measure() {
    local out=$1
    shift
    case " $* " in
        *" --registry "*|*" --registry="*) ;;
        *) echo "e2e: give the tuned registry: bench/run e2e -- --registry DB (see bench/suites/e2e.sh)" >&2; return 1 ;;
    esac
    OUT=$out "${AITUNE_PYTHON:-python3}" bench/llama_e2e.py "$@" | tee "$out/e2e.txt"
    return "${PIPESTATUS[0]}"
}

# The table llama_e2e.py prints last (batch | cuBLAS eager | eager + patch |
# torch.compile | compile + patch | compile + patch / compile) and its
# prefill, host and check lines.
rows() {
    python3 - "$1/e2e.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
bars = {"1": 1.15, "8": 1.10, "32": 1.00}
def num(v):
    m = re.match(r"\s*([0-9.]+)", v or "")
    return float(m.group(1)) if m else None
def row(*cells):
    print("\t".join(cells))
for line in text.splitlines():
    c = [x.strip() for x in line.strip().strip("|").split("|")] if line.startswith("|") else []
    if len(c) != 6 or not re.match(r"^\d+(, no graph)?$", c[0]):
        continue
    eager, patch, comp, cpatch = num(c[1]), num(c[2]), num(c[3]), num(c[4])
    if c[0].endswith("no graph"):
        if eager and patch:
            x = patch / eager
            row("decode batch 1, eager, no graph, tokens/s", "%.1f with aitune.patch" % patch, "eager %.1f" % eager,
                "%.3fx eager" % x, ">= 1.00x eager", "yes" if x >= 1.0 else "no")
        continue
    if comp and cpatch:
        x = cpatch / comp
        lo = bars.get(c[0])
        row("decode batch %s, CUDA graph, tokens/s" % c[0], "%.1f compile + patch" % cpatch,
            "torch.compile %.1f; cuBLAS eager %s; eager + patch %s" % (comp, c[1], c[2]), "%.3fx compile" % x,
            ">= %.2fx compile" % lo if lo else "", ("yes" if x >= lo else "no") if lo else "")
m = re.search(r"^prefill (\d+) tokens: (.*?); compile / compile\+patch time ([0-9.]+)x", text, re.M)
if m:
    x = float(m.group(3))
    row("prefill of %s tokens, batch 1" % m.group(1), m.group(2), "", "%.3fx compile" % x, ">= 1.00x compile",
        "yes" if x >= 1.0 else "no")
m = re.search(r"^host per call: aitune.nn.Linear.forward ([0-9.]+) us, .*torch.mm ([0-9.]+) us, .*\(forward / mm ([0-9.]+)x\)(.*)$",
              text, re.M)
if m:
    us, mm, x, note = float(m.group(1)), m.group(2), float(m.group(3)), m.group(4).strip()
    row("host time per call, 1 x 4096 x 4096 (aitune.nn.Linear)", "%.1f us%s" % (us, " " + note if note else ""),
        "torch.mm %s us" % mm, "%.2fx torch.mm" % x, "<= 10 us, <= 0.5x torch.mm",
        "yes" if us <= 10 and x <= 0.5 and not note else "no")
m = re.search(r"^check=True, one decode step: (\d+) calls compared, first difference: (.*?); logits max error (\S+) of max \|logit\|,"
              r" same next token: (\w+)", text, re.M)
if m:
    ok = m.group(2) == "none" and m.group(4) == "True" and int(m.group(1)) > 0
    row("check=True over a decode step", "%s calls compared, first difference %s, logits max error %s" % m.group(1, 2, 3),
        "PyTorch", "", "passes; logits within bf16 tolerance", "yes" if ok else "no")
PY
}
