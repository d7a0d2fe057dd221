-- Hopper (sm_90a) device helpers shared by lib/wgmma.lua and lib/swapab.lua:
-- the CUtensorMap kernel parameter, mbarriers (init, parity wait, arrive,
-- arrive with a transaction count), a 2D TMA load that completes on an
-- mbarrier, the shared-memory matrix descriptor with the 128-byte swizzle,
-- and wgmma's fence / commit / wait; wgmma_fn(n, intype, tnsp_b[, cap]) writes
-- wgmma_tile() (or wgmma_w<n>), one wgmma m64nNk16 with fp32 accumulation.
local M = {}

M.ptx = [[
struct __align__(64) tmap_t { unsigned long long v[16]; };

AIT_DEV unsigned smem_u32(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
AIT_DEV void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(count));
}
AIT_DEV void mbar_wait(unsigned bar, unsigned parity) {
  unsigned ok;
  do {
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(ok) : "r"(bar), "r"(parity) : "memory");
  } while (!ok);
}
AIT_DEV void mbar_expect(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}
AIT_DEV void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
}
AIT_DEV void tma_load(unsigned dst, const tmap_t* map, int x, int y, unsigned bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
               :: "r"(dst), "l"((unsigned long long)map), "r"(x), "r"(y), "r"(bar) : "memory");
}
// A shared-memory matrix descriptor with the 128-byte swizzle.
AIT_DEV unsigned long long desc(unsigned addr, unsigned lbo, unsigned sbo) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)(lbo >> 4) << 16) |
         ((unsigned long long)(sbo >> 4) << 32) | (1ull << 62);
}
AIT_DEV void wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
AIT_DEV void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template<int N> AIT_DEV void wg_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory"); }
]]

-- A box of a weight read once: EVICT 1 (the kernel's #define) loads it
-- evict-first in L2, so the operand the CTAs share and their sums stay
-- there (swapab's evict param; what it measured: lib/swapab.lua's header).
M.tma_load_w = [[
AIT_DEV void tma_load_w(unsigned dst, const tmap_t* map, int x, int y, unsigned bar) {
#if EVICT
  unsigned long long policy;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
               " [%0], [%1, {%2, %3}], [%4], %5;"
               :: "r"(dst), "l"((unsigned long long)map), "r"(x), "r"(y), "r"(bar), "l"(policy) : "memory");
#else
  tma_load(dst, map, x, y, bar);
#endif
}
]]

-- The gated product's B (op.swiglu: gemm_swiglu, B = [G; U] 2n x k,
-- lib/gemm.lua) for the TMA families that take it (lib/wgmma.lua,
-- lib/swapab.lua): a 4-D load of B's rows as groups of 8 gate rows, each
-- followed by the same 8 up rows (the map's dims: k; 8 rows; gate or up, n
-- rows apart; groups of 8).
M.tma_load4 = [[
AIT_DEV void tma_load4(unsigned dst, const tmap_t* map, int x, int g, unsigned bar) {
  asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3, %3, %4}], [%5];"
               :: "r"(dst), "l"((unsigned long long)map), "r"(x), "r"(0), "r"(g), "r"(bar) : "memory");
}
]]

-- Whether B's 4-D map can read a gated product's shape: n whole groups of 8
-- rows, k rows of 16-byte strides (false and why, else true).
function M.swiglu_supports(shape)
  if shape.n % 8 ~= 0 or shape.k % 8 ~= 0 then
    return false, "the gated product reads B in place by groups of 8 rows: n must be a multiple of 8 and k of 8"
  end
  return true
end

-- B's tensor map for the gated product: boxes of `groups` groups of 16 rows.
function M.swiglu_bmap(esize, groups)
  return { kind = "tmap", arg = "B", dims = { "k", "8", "2", "cdiv(n, 8)" },
           strides = { "k*" .. esize, "n*k*" .. esize, "8*k*" .. esize },
           box = { 64, 8, 2, groups }, swizzle = 128, oob = "zero", l2 = 256 }
end

-- "{%0, %1, ..., %(n-1)}"
local function reglist(first, n)
  local r = {}
  for i = 0, n - 1 do r[#r + 1] = "%" .. (first + i) end
  return "{" .. table.concat(r, ", ") .. "}"
end

-- A device function issuing one wgmma m64nNk16 on a float[N/2] accumulator
-- (A and B from shared memory; tnsp_b 1: B is MN-major): wgmma_tile(). With
-- `cap` (a width above n) it is instead the specialization wgmma_w<N> of a
-- template the source declares, on the first N/2 of a float[cap/2]
-- accumulator: a kernel whose tile width is chosen at run time holds one
-- per width (lib/wgmma_swap.lua, wstep).
function M.wgmma_fn(n, intype, tnsp_b, cap)
  local outs = {}
  for i = 0, n // 2 - 1 do outs[#outs + 1] = string.format('"+f"(d[%d])', i) end
  local head = cap and string.format("template<> AIT_DEV void wgmma_w<%d>(float (&d)[%d]", n, cap // 2)
                    or string.format("AIT_DEV void wgmma_tile(float (&d)[%d]", n // 2)
  return string.format([[
%s, unsigned long long da, unsigned long long db) {
  asm volatile("{ .reg .pred p; setp.ne.b32 p, %%%d, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s %s, %%%d, %%%d, p, 1, 1, 0, %d; }\n"
               : %s
               : "l"(da), "l"(db), "r"(1));
}
]], head, n // 2 + 2, n, intype, intype, reglist(0, n // 2), n // 2, n // 2 + 1, tnsp_b, table.concat(outs, ", "))
end

return M
