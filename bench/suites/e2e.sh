# bench/suites/e2e.sh: a real model end to end (issue 32): Hugging Face
# transformers' LlamaForCausalLM with the Llama-3-8B configuration (random
# bf16 weights), decode steps in a CUDA graph, tokens per second, with and
# without aitune.patch, eager and under torch.compile (bench/llama_e2e.py).
about="Llama-3-8B decode end to end, tokens/s: PyTorch, aitune.patch, torch.compile, torch.compile + aitune.patch"
spec="the model's shapes, tuned by the package's one-command tuning (bench/llama_e2e.py)"
peers="the same model in PyTorch eager (cuBLAS) and under torch.compile, same process"
metric="tokens per second over the decode steps (batch 1, 8, 32; a 2048-token prefill); x torch.compile"
bar="batch 1 in a CUDA graph: compile + patch >= 1.15x compile; batch 8 >= 1.10x; batch 32 and prefill >= 1.00x; eager batch 1 >= 1.00x"
gpus=1
minutes=9
command="python3 bench/llama_e2e.py"
needs="bench/llama_e2e.py"

measure() { local out=$1; shift; OUT=$out python3 bench/llama_e2e.py "$@" | tee "$out/e2e.txt"; return "${PIPESTATUS[0]}"; }

# The script prints a short table last; each row becomes a figure.
rows() { last_table "$1/e2e.txt"; }
