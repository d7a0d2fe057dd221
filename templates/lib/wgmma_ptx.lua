-- Inline PTX of the Hopper GEMM family (lib/wgmma.lua) beyond lib/hopper.lua's:
-- multicast TMA loads and remote mbarrier arrives for 2-CTA clusters, TMA
-- stores and their waits, named barriers, the epilogue's shared-memory
-- stores (st_shared), a consumer's slot release, and the acquire loads and
-- proxy fence that tma_ws and staging use. Device text only, under the
-- kernel's #defines (EPI_F32, EPI_CVT, CLUSTER, EPI_WS, STAGE_A, STAGE_B).
local M = {}

-- The gated product's B tile into both CTAs of a pair (lib/hopper.lua's
-- tma_load4, multicast).
M.swiglu_text = [[
AIT_DEV void tma_load4_both(unsigned dst, const tmap_t* map, int x, int g, unsigned bar) {
  asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
               " [%0], [%1, {%2, %3, %3, %4}], [%5], %6;"
               :: "r"(dst), "l"((unsigned long long)map), "r"(x), "r"(0), "r"(g), "r"(bar), "h"((unsigned short)3) : "memory");
}
]]

M.text = [[
// The same box into the same offset of both CTAs of the pair.
AIT_DEV void tma_load_both(unsigned dst, const tmap_t* map, int x, int y, unsigned bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
               " [%0], [%1, {%2, %3}], [%4], %5;"
               :: "r"(dst), "l"((unsigned long long)map), "r"(x), "r"(y), "r"(bar), "h"((unsigned short)3) : "memory");
}
AIT_DEV void mbar_arrive_peer(unsigned bar, unsigned peer) {
  asm volatile("{ .reg .b32 r; mapa.shared::cluster.u32 r, %0, %1; mbarrier.arrive.shared::cluster.b64 _, [r]; }"
               :: "r"(bar), "r"(peer) : "memory");
}
AIT_DEV void tma_store(const tmap_t* map, unsigned src, int x, int y) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
               :: "l"((unsigned long long)map), "r"(x), "r"(y), "r"(src) : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
template<int N> AIT_DEV void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read %0;" :: "n"(N) : "memory"); }
AIT_DEV void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
AIT_DEV void wg_sync(int id) { asm volatile("bar.sync %0, 128;" :: "r"(id) : "memory"); }
AIT_DEV void st_shared(unsigned a, float x, float y) {
#if EPI_F32
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};" :: "r"(a), "f"(x), "f"(y) : "memory");
#else
  unsigned v; asm("cvt.rn." EPI_CVT ".f32 %0, %2, %1;" : "=r"(v) : "f"(x), "f"(y));
  asm volatile("st.shared.b32 [%0], %1;" :: "r"(a), "r"(v) : "memory");
#endif
}
AIT_DEV void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}
AIT_DEV unsigned cluster_rank() { unsigned r; asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r; }
// A consumer warp is done with a slot: tell this CTA's producer and, in a
// pair, the peer's (whose multicast also fills this slot).
AIT_DEV void release(unsigned bar, int rank) {
  mbar_arrive(bar);
  if (CLUSTER > 1) mbar_arrive_peer(bar, (unsigned)rank ^ 1u);
}
#if EPI_WS
// tma_ws's copy warps: 16 bytes of the copy of D through L2 (just written
// there), and a consumer's count of ready tiles.
AIT_DEV uint4 ld_cg_v4(const void* p) {
  uint4 v;
  asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p) : "memory");
  return v;
}
AIT_DEV unsigned ld_acquire_cta(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.cta.shared.u32 %0, [%1];" : "=r"(v) : "r"((unsigned)__cvta_generic_to_shared(p)) : "memory");
  return v;
}
#endif
#if STAGE_A || STAGE_B
AIT_DEV unsigned ld_acquire(const unsigned* p) {
  unsigned v; asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v;
}
// Between generic-proxy global stores and the async proxy (TMA) reading
// them: the staged copies.
AIT_DEV void fence_proxy_global() { asm volatile("fence.proxy.async.global;" ::: "memory"); }
#endif

]]

return M
