"""attn_decode against transformers' sdpa path (the same mask), each a chain in a CUDA graph."""
import sys, torch
import aitune
from aitune import attention as A, ops
from transformers.integrations.sdpa_attention import sdpa_attention_forward
aitune.use(sys.argv[1])
small = len(sys.argv) > 2
class Mod(torch.nn.Module):
    num_key_value_groups = 4
    is_causal = True
mod = Mod().eval()
def graph_time(fn, reps=20, rounds=5):
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3): fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(reps): fn()
    best = 1e9
    for _ in range(rounds):
        e0, e1 = torch.cuda.Event(True), torch.cuda.Event(True)
        e0.record(); g.replay(); e1.record(); torch.cuda.synchronize()
        best = min(best, e0.elapsed_time(e1) * 1e3 / reps)
    return best
rows = []
shapes = [(1, 184, 176), (8, 184, 176), (32, 184, 176), (1, 2048, 2000), (8, 2048, 2000), (1, 2048, 100)]
if small:
    shapes = [(1, 184, 176), (8, 184, 100)]
for b, n, pos in shapes:
    torch.manual_seed(0)
    q = torch.randn(b, 32, 1, 128, dtype=torch.bfloat16, device="cuda")
    k = torch.randn(b, 8, n, 128, dtype=torch.bfloat16, device="cuda")
    v = torch.randn(b, 8, n, 128, dtype=torch.bfloat16, device="cuda")
    mask = (torch.arange(n, device="cuda") <= pos).view(1, 1, 1, n).expand(b, 1, 1, n)
    with torch.no_grad():
        want = sdpa_attention_forward(mod, q, k, v, mask, scaling=128 ** -0.5)[0]
        got = A.attention_forward(mod, q, k, v, mask, scaling=128 ** -0.5)[0]
        used = A._has_kernel(q, k)
        err = (got.float() - want.float()).abs().max().item()
        if small:
            print("b %d n %d: kernel %s, max err %.4g" % (b, n, used, err)); continue
        bias = A._bias(mask, b, n, q.dtype, q.device)
        q3 = q.reshape(b, 32, 128)
        t_sdpa = graph_time(lambda: sdpa_attention_forward(mod, q, k, v, mask, scaling=128 ** -0.5))
        t_op = graph_time(lambda: ops.attn_decode(q3, k, v, bias, 128 ** -0.5))
        t_fwd = graph_time(lambda: A.attention_forward(mod, q, k, v, mask, scaling=128 ** -0.5))
    rows.append((b, n, pos, used, err, t_sdpa, t_op, t_fwd))
print("| b | n | keys kept | aitune kernel | max err | sdpa us | attn_decode us | with mask->bias us | x sdpa (op) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for b, n, pos, used, err, ts, to, tf in rows:
    print("| %d | %d | %d | %s | %.4f | %.2f | %.2f | %.2f | %.2fx |" % (b, n, pos + 1, used, err, ts, to, tf, ts / to))
