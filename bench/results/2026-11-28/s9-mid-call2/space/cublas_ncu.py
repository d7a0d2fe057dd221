import torch, torch.nn.functional as F
torch.manual_seed(0)
for n, k, ms in ((4096, 4096, (65, 96, 128, 160, 192, 224, 255)), (1024, 4096, (128, 192))):
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    for m in ms:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        torch.cuda.nvtx.range_push("m%d_n%d_k%d" % (m, n, k))
        for _ in range(2):
            F.linear(x, w)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
