-- Attention of one new token per sequence over a key/value cache (a decode
-- step), grouped-query heads: o[b, h, :] = softmax_j(q[b, h, :] . k[b, g', j, :]
-- * scale + bias[b, j]) v[b, g', j, :], where g' = h / (heads / kv heads).
-- q and o are [b, h, d], k and v [b, g, n, d] (a static cache's layout:
-- Hugging Face's StaticCache keeps [batch, kv heads, length, head dim]),
-- bias [b, n]: 0 where a key takes part, -inf where it does not (the mask of
-- the cache's unfilled positions and padding), or any additive bias. A row
-- whose keys are all -inf gives zeros (PyTorch gives NaN there).
local kernel = lib("kernel")
local rows = lib("rows")
local dtype = lib("dtype")
local op = {
  name = "attn_decode",
  dims = { "b", "h", "g", "n", "d" },
  dtypes = { "bf16", "f16" },
  args = {
    { name = "q", type = "T", role = "in", size = function(s) return s.b * s.h * s.d end, init = "normal" },
    { name = "k", type = "T", role = "in", size = function(s) return s.b * s.g * s.n * s.d end, init = "normal" },
    { name = "v", type = "T", role = "in", size = function(s) return s.b * s.g * s.n * s.d end, init = "normal" },
    { name = "bias", type = "T", role = "in", size = function(s) return s.b * s.n end, init = "normal" },
    { name = "o", type = "T", role = "out", size = function(s) return s.b * s.h * s.d end },
    { name = "scale", type = "f32", role = "scalar", value = 0.08838834764831845 },
    { name = "b", role = "dim" },
    { name = "h", role = "dim" },
    { name = "g", role = "dim" },
    { name = "n", role = "dim" },
    { name = "d", role = "dim" },
  },
  tolerance = {
    f16 = { rtol = 2e-3, atol = 2e-3 },
    bf16 = { rtol = 1.6e-2, atol = 1.6e-2 },
  },
}

-- The reference: a block per (sequence, head), in double: the scores' max,
-- then their exponentials' sum, then the output, keys RT at a time (each
-- thread one key's score into shared memory, then each thread one dim).
op.reference = {
  source = function(dt, name)
    return dtype.prelude .. rows.ref_common .. string.format([[
typedef %s CT;
#define LD(x) ld_%s(x)
#define ST(x) st_%s((float)(x))
extern "C" __global__ void __launch_bounds__(RT) %s(%s) {
  __shared__ double sh[RT];
  __shared__ double ps[RT];
  const long long bi = blockIdx.x / h, hh = blockIdx.x %% h, kh = hh / (h / g);
  const CT* qr = q + (bi * h + hh) * d;
  const CT* kb = k + (bi * g + kh) * n * d;
  const CT* vb = v + (bi * g + kh) * n * d;
  const CT* br = bias + bi * n;
  double mx = -1.0 / 0.0;
  for (long long j = threadIdx.x; j < n; j += RT) {
    double s = 0.0;
    for (long long e = 0; e < d; e++) s += (double)LD(qr[e]) * (double)LD(kb[j * d + e]);
    s = s * (double)scale + (double)LD(br[j]);
    mx = s > mx ? s : mx;
  }
  mx = ref_block(mx, sh, true);
  double acc = 0.0, l = 0.0;
  for (long long j0 = 0; j0 < n; j0 += RT) {
    const long long j = j0 + threadIdx.x;
    double p = 0.0;
    if (j < n && mx != -1.0 / 0.0) {
      double s = 0.0;
      for (long long e = 0; e < d; e++) s += (double)LD(qr[e]) * (double)LD(kb[j * d + e]);
      p = exp(s * (double)scale + (double)LD(br[j]) - mx);
    }
    __syncthreads();
    ps[threadIdx.x] = p;
    __syncthreads();
    const long long top = n - j0 < RT ? n - j0 : RT;
    for (long long i = 0; i < top; i++) {
      l += ps[i];
      if (threadIdx.x < d) acc += ps[i] * (double)LD(vb[(j0 + i) * d + threadIdx.x]);
    }
  }
  for (long long e = threadIdx.x; e < d; e += RT) {
    double a = acc;
    if (e != threadIdx.x) {   // d > RT: this dim's sum again
      a = 0.0;
      for (long long j = 0; j < n; j++) {
        double s = 0.0;
        for (long long f = 0; f < d; f++) s += (double)LD(qr[f]) * (double)LD(kb[j * d + f]);
        if (mx != -1.0 / 0.0) a += exp(s * (double)scale + (double)LD(br[j]) - mx) * (double)LD(vb[j * d + e]);
      }
    }
    o[(bi * h + hh) * d + e] = ST(l > 0.0 ? a / l : 0.0);
  }
}
]], dtype.ctype(dt), dt, dt, name, kernel.params(op, dt))
  end,
  launch = function(dt) return { grid = { "b * h", 1, 1 }, block = { rows.REF_THREADS, 1, 1 }, smem = 0 } end,
}

op.metrics = function(shape, dt)
  return { flops = 4 * shape.b * shape.h * shape.n * shape.d, bytes = kernel.bytes(op, dt, shape) }
end

return op
