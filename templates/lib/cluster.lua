-- Thread-block cluster helpers (sm_90) shared by the templates: a block's
-- rank in its cluster, the cluster barrier (arrive with release semantics,
-- wait with acquire, so shared-memory writes before it are seen by peers
-- after it), and a float read from a peer block's shared memory through
-- distributed shared memory (mapa + ld.shared::cluster).
local M = {}

M.ptx = [[
AIT_DEV unsigned cta_rank() { unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r; }
AIT_DEV void cluster_arrive() { asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory"); }
AIT_DEV void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }
AIT_DEV float ld_peer(unsigned addr, unsigned rank) {
  unsigned a;
  float v;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(a) : "r"(addr), "r"(rank));
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(a) : "memory");
  return v;
}
]]

return M
