// TMA weight-stream probe (bench/tma_rows.sh, issue 10): how fast does TMA
// stream a 4096 x 4096 bf16 weight (nt: rows of k contiguous) into shared
// memory, back to back with PDL over rotating copies (decode_common.cuh's
// timerot), as a function of the box's shape? A 3D view of the weight
// {64 k, k/64 chunks, n rows} lets one box cover KO consecutive 128-byte
// chunks of each of R rows: TMA then requests KO * 128 contiguous bytes of
// a row before moving to the next row (a 2D box {64, R} is KO = 1: 128
// bytes per row). The consumer warp only waits for each slot and frees it,
// so this is the stream alone; a grid-stride read with PDL (readg<1>) is the
// ceiling in the same run, with the slab GEMV (decode_common.cuh, PDL, the
// template's winning shape: 2 groups, 8 warps along k, 4 chunks).
// With arguments, each CUBIN:KERNEL:BM:BN:CS:STAGES:SMEM:LABEL (a swapab kernel,
// templates/gemm_nt/swapab.lua, as aitune compiled it: bench/tma_rows.sh) is checked
// against the reference and timed the same way, at m = 16.
#include "decode_common.cuh"
#include <cuda.h>
#include <cudaTypedefs.h>

__device__ __forceinline__ void bar_init(unsigned b, unsigned c) { asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(c)); }
__device__ __forceinline__ void bar_wait(unsigned b, unsigned ph) {
  unsigned ok;
  do { asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }" : "=r"(ok) : "r"(b), "r"(ph) : "memory"); } while (!ok);
}
__device__ __forceinline__ void bar_expect(unsigned b, unsigned n) { asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(n) : "memory"); }
__device__ __forceinline__ void bar_arrive(unsigned b) { asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(b) : "memory"); }

// CTA c streams boxes [c * nbox / G, (c + 1) * nbox / G) of the weight, in
// row-tile-major order (kb boxes per row tile), through S slots.
template<int KO, int R, int S>
__global__ void __launch_bounds__(64) tma_stream(const __grid_constant__ CUtensorMap tm, long long nbox, int kb, u32* out) {
  extern __shared__ unsigned char raw[];
  __shared__ __align__(8) unsigned long long bars[2 * S];
  const unsigned base = ((unsigned)__cvta_generic_to_shared(raw) + 1023u) & ~1023u;
  const unsigned full = (unsigned)__cvta_generic_to_shared(bars), empty = full + 8 * S;
  constexpr unsigned BYTES = KO * 128 * R;
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; s++) { bar_init(full + 8 * s, 1); bar_init(empty + 8 * s, 1); }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  asm volatile("griddepcontrol.wait;" ::: "memory");
  const long long b0 = blockIdx.x * nbox / gridDim.x, b1 = (blockIdx.x + 1) * nbox / gridDim.x;
  int s = 0; unsigned ph = 0;
  if (threadIdx.x == 0) {
    for (long long b = b0; b < b1; b++) {
      bar_wait(empty + 8 * s, ph ^ 1);
      bar_expect(full + 8 * s, BYTES);
      const int kc = (int)(b % kb) * KO, row = (int)(b / kb) * R;
      asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
                   :: "r"(base + s * BYTES), "l"((unsigned long long)&tm), "r"(0), "r"(kc), "r"(row), "r"(full + 8 * s) : "memory");
      if (++s == S) { s = 0; ph ^= 1; }
    }
  } else if (threadIdx.x == 32) {
    u32 acc = 0;
    for (long long b = b0; b < b1; b++) {
      bar_wait(full + 8 * s, ph);
      u32 v; asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(base + s * BYTES + 4u * (unsigned)(b & 31)));
      acc ^= v;
      bar_arrive(empty + 8 * s);
      if (++s == S) { s = 0; ph ^= 1; }
    }
    if (acc == 0x12345678u) out[0] = acc;
  }
}

static PFN_cuTensorMapEncodeTiled_v12000 g_encode;
static CUtensorMap map3(const u16* w, int n, int k, int ko, int r) {
  CUtensorMap tm;
  cuuint64_t dims[3] = { 64, (cuuint64_t)k / 64, (cuuint64_t)n };
  cuuint64_t strides[2] = { 128, (cuuint64_t)k * 2 };
  cuuint32_t box[3] = { 64, (cuuint32_t)ko, (cuuint32_t)r }, es[3] = { 1, 1, 1 };
  CUresult e = g_encode(&tm, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, (void*)w, dims, strides, box, es,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (e != CUDA_SUCCESS) { printf("encode failed %d (ko %d r %d)\n", (int)e, ko, r); exit(1); }
  return tm;
}

static decode_problem P;
static u32* g_out;
template<int KO, int R, int S> static void run(int grid) {
  const int n = P.n, k = P.k;
  CUtensorMap maps[16];
  for (int i = 0; i < P.R; i++) maps[i] = map3(P.w[i], n, k, KO, R);
  const int kb = k / (64 * KO);
  const long long nbox = (long long)(n / R) * kb;
  const int smem = S * KO * 128 * R + 1024;
  CK(cudaFuncSetAttribute(tma_stream<KO, R, S>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  auto f = [&](int i) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid); cfg.blockDim = dim3(64); cfg.dynamicSmemBytes = smem; cfg.stream = g_stream;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = at; cfg.numAttrs = 1;
    CK(cudaLaunchKernelEx(&cfg, tma_stream<KO, R, S>, maps[i], nbox, kb, g_out));
  };
  const double us = timerot(f, P.R);
  printf("tma KO %d (%4d B/row) R %3d box %5d B  S %2d  grid %3d  smem %6d: %6.2f us  %.2f TB/s\n", KO, KO * 128, R,
         KO * 128 * R, S, grid, smem, us, (double)n * k * 2 / us / 1e6);
}

// A swapab kernel from its cubin: tensor maps as the template's launch plan
// builds them, a cluster of 1 x CS, PDL.
static void run_swapab(const char* spec) {
  char path[512], name[256], label[64]; int bm, bn, cs, st, smem;
  if (sscanf(spec, "%511[^:]:%255[^:]:%d:%d:%d:%d:%d:%63s", path, name, &bm, &bn, &cs, &st, &smem, label) != 8) { printf("bad spec %s\n", spec); exit(1); }
  CUmodule mod; CUfunction fn;
  if (cuModuleLoad(&mod, path) != CUDA_SUCCESS) { printf("cannot load %s\n", path); exit(1); }
  if (cuModuleGetFunction(&fn, mod, name) != CUDA_SUCCESS) { printf("no kernel in %s\n", path); exit(1); }
  cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem);
  const int n = P.n, k = P.k;
  long long m = P.m, nn = n, kk = k;
  static CUtensorMap mw[16], mx;
  cuuint32_t es[2] = { 1, 1 };
  for (int i = 0; i < P.R; i++) {
    cuuint64_t dims[2] = { (cuuint64_t)k, (cuuint64_t)n }, str[1] = { (cuuint64_t)k * 2 };
    cuuint32_t box[2] = { 64, (cuuint32_t)bm };
    g_encode(&mw[i], CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, (void*)P.w[i], dims, str, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
             CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  }
  {
    cuuint64_t dims[2] = { (cuuint64_t)k, (cuuint64_t)m }, str[1] = { (cuuint64_t)k * 2 };
    cuuint32_t box[2] = { 64, (cuuint32_t)bn };
    g_encode(&mx, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, (void*)P.x, dims, str, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
             CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  }
  void* d = P.d;
  auto f = [&](int i) {
    void* args[] = { &mw[i], &mx, &d, &m, &nn, &kk };
    CUlaunchAttribute at[2];
    at[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION; at[0].value.clusterDim.x = 1; at[0].value.clusterDim.y = cs; at[0].value.clusterDim.z = 1;
    at[1].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION; at[1].value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig cfg = {};
    cfg.gridDimX = (n + bm - 1) / bm; cfg.gridDimY = cs; cfg.gridDimZ = 1;
    cfg.blockDimX = 160; cfg.blockDimY = 1; cfg.blockDimZ = 1;
    cfg.sharedMemBytes = smem; cfg.hStream = (CUstream)g_stream; cfg.attrs = at; cfg.numAttrs = 2;
    if (cuLaunchKernelEx(&cfg, fn, args, nullptr) != CUDA_SUCCESS) { printf("launch failed\n"); exit(1); }
  };
  CK(cudaMemset(P.d, 0xff, (size_t)P.m * n * 2));
  f(0); CK(cudaDeviceSynchronize());
  const int bad = count_wrong(P.d, P.ref, P.m, n);
  const double us = timerot(f, P.R);
  printf("swapab %-8s bm %3d bn %2d cs %d stages %d smem %6d: %6.2f us  %.2f TB/s  %d wrong\n", label, bm, bn, cs, st, smem, us,
         (double)n * k * 2 / us / 1e6, bad);
  cuModuleUnload(mod);
}

int main(int argc, char** argv) {
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void**)&g_encode, 12000, cudaEnableDefault, &q));
  P = decode_setup(16, 4096, 4096, 8);
  CK(cudaMalloc(&g_out, 64));
  {
    const long long nv = (long long)P.n * P.k * 2 / 16;
    auto f = [&](int i) { launch(readg<1>, 132 * 8, 256, true, (const uint4*)P.w[i], nv, g_out); };
    const double us = timerot(f, P.R);
    printf("grid-stride read, PDL: %6.2f us  %.2f TB/s\n", us, (double)P.n * P.k * 2 / us / 1e6);
  }
  {
    auto f = [&](int i) { launch(gemv_slab<2, 8, 4, 1>, P.n / 16, 256, true, (const u16*)P.x, (const u16*)P.w[i], P.d, P.m, P.n, P.k); };
    CK(cudaMemset(P.d, 0xff, (size_t)P.m * P.n * 2));
    f(0); CK(cudaDeviceSynchronize());
    const int bad = count_wrong(P.d, P.ref, P.m, P.n);
    const double us = timerot(f, P.R);
    printf("slab GEMV (2 groups, 8 warps, 4 chunks), PDL: %6.2f us  %.2f TB/s  %d wrong\n", us, (double)P.n * P.k * 2 / us / 1e6, bad);
  }
  if (argc > 1) {
    run<1, 64, 8>(128);   // the streams of swapab's 64- and 128-row tiles at 8 stages
    run<1, 128, 8>(64);
    for (int i = 1; i < argc; i++) run_swapab(argv[i]);
    decode_free(P);
    return 0;
  }
  for (int grid : { 128, 132, 264 }) {
    run<1, 64, 8>(grid);
    run<1, 128, 8>(grid);
    run<2, 32, 8>(grid);
    run<4, 16, 8>(grid);
    run<8, 8, 8>(grid);
    run<4, 32, 6>(grid);
    run<8, 16, 6>(grid);
    run<4, 64, 4>(grid);
    run<8, 32, 3>(grid);
  }
  run<4, 16, 12>(132);
  run<8, 8, 12>(132);
  run<4, 16, 4>(132);
  run<8, 8, 4>(132);
  decode_free(P);
  return 0;
}
