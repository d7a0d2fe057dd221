"""Kernel breakdown of one batch-1 decode step: compile vs compile+patch (graph replays profiled)."""
import sys, os, time, collections
sys.path.insert(0, os.path.join(os.getcwd(), "bench"))
import torch, llama_e2e as E
import aitune
reg = sys.argv[1]
a = E.parse(["--registry", reg, "--batches", "1", "--prefill", "0"])
d = aitune.use(reg)
model, cfg, _ = E.build(a, torch)
from torch.profiler import profile, ProfilerActivity
for variant in ("compile+patch-noattn", "compile+patch"):
    p = aitune.patch(model, d, attention=not variant.endswith("noattn")) if "patch" in variant else None
    dec = E.Decoder(model, cfg, 1, a, torch, None)
    dec.fn = torch.compile(dec.forward, mode="default", dynamic=False)
    dec.capture()
    dt = dec.run(48)
    print("%s: %.3f ms/step, %.1f tok/s" % (variant, dt / 48 * 1e3, 48 / dt), flush=True)
    N = 5
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        dec.run(N - 1)
        torch.cuda.synchronize()
    per = collections.defaultdict(lambda: [0, 0.0])
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            k = e.name[:90]
            per[k][0] += 1
            per[k][1] += e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
    steps = N   # run() replays once untimed plus N-1 timed
    tot = sum(v[1] for v in per.values()) / steps
    cnt = sum(v[0] for v in per.values()) / steps
    print("  kernels/step %.0f, kernel time/step %.1f us" % (cnt, tot))
    for k, (c, t) in sorted(per.items(), key=lambda kv: -kv[1][1])[:28]:
        print("  %6.1f us %5.0f x  %s" % (t / steps, c / steps, k))
    if p is not None:
        aitune.unpatch(model)
    del dec
    torch.cuda.empty_cache()
