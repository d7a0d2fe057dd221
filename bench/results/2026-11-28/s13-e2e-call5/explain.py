import torch, transformers, aitune, sys
sys.path.insert(0, "bench")
import llama_e2e as E
print(torch.__version__, transformers.__version__)
a = E.parse(["--registry", "/tmp/l3.db", "--tiny", "--batches", "1", "--prefill", "0"])
aitune.use("/tmp/l3.db")
model, cfg, _ = E.build(a, torch)
p = aitune.patch(model)
from aitune import ops as O
O.own_attention = torch.compiler.assume_constant_result(lambda *a: True)
dec = E.Decoder(model, cfg, 1, a, torch, None)
with torch.no_grad():
    ex = torch._dynamo.explain(dec.forward)(dec.ids, dec.pos)
print("forced: graphs", ex.graph_count, "breaks", ex.graph_break_count)
for b in ex.break_reasons[:4]:
    print("REASON", b.reason[:1500]);
    for f in (b.user_stack or [])[-6:]:
        print("   ", f)
