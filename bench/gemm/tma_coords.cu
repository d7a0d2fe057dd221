// Which tensor maps and box coordinates make a TMA load fault on sm_90a?
// One 64 x 8 bf16 box, 128-byte swizzle, from a 2D map of dims {dims0, 8}.
//   nvcc -arch=sm_90a -o tma_coords bench/gemm/tma_coords.cu -lcuda
//   ./tma_coords DIMS0 X STRIDE_BYTES BASE_OFFSET_BYTES   (K16=1: the map is the 10th of 16 params)
// Measured (bench/archive/RESULTS-2026.md, third session): any X that is not a multiple
// of 8 elements (16 bytes) is an illegal instruction, whatever dims0 and the
// stride; an odd dims0 and 16 tensor-map params are fine.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
struct __align__(64) tmap_t { unsigned long long v[16]; };
// One box from map tm at (x, 0) into shared memory, copied out.
__device__ void load_box(const tmap_t* tm, int x, unsigned short* out) {
  __shared__ __align__(1024) unsigned char buf[8 * 128];
  __shared__ __align__(8) unsigned long long bar;
  unsigned b = (unsigned)__cvta_generic_to_shared(&bar), d = (unsigned)__cvta_generic_to_shared(buf);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
    asm volatile("fence.mbarrier_init.release.cluster;");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(1024));
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(d), "l"((unsigned long long)tm), "r"(x), "r"(0), "r"(b) : "memory");
    unsigned ok = 0;
    while (!ok) asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }" : "=r"(ok) : "r"(b));
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 512; i += blockDim.x) out[i] = ((unsigned short*)buf)[i];
}
__global__ void k(const __grid_constant__ tmap_t tm, int x, unsigned short* out) { load_box(&tm, x, out); }
// The map as the 10th of 16 tensor-map parameters.
__global__ void k16(const __grid_constant__ tmap_t t0, const __grid_constant__ tmap_t t1, const __grid_constant__ tmap_t t2, const __grid_constant__ tmap_t t3, const __grid_constant__ tmap_t t4, const __grid_constant__ tmap_t t5, const __grid_constant__ tmap_t t6, const __grid_constant__ tmap_t t7, const __grid_constant__ tmap_t t8, const __grid_constant__ tmap_t t9, const __grid_constant__ tmap_t t10, const __grid_constant__ tmap_t t11, const __grid_constant__ tmap_t t12, const __grid_constant__ tmap_t t13, const __grid_constant__ tmap_t t14, const __grid_constant__ tmap_t t15, int x, unsigned short* out) {
  load_box(&t9, x, out);
}
int main(int argc, char** argv) {
  long long dims0 = atoll(argv[1]); int x = atoi(argv[2]); long long stride = atoll(argv[3]); long long off = atoll(argv[4]);
  unsigned char* p; cudaMalloc(&p, 64 << 20); cudaMemset(p, 0, 64 << 20);
  unsigned short* out; cudaMalloc(&out, 4096);
  typedef CUresult (*enc_t)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  void* fn; cudaDriverEntryPointQueryResult q;
  cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, cudaEnableDefault, &q);
  tmap_t tm; cuuint64_t gd[2] = { (cuuint64_t)dims0, 8 }, gs[1] = { (cuuint64_t)stride }; cuuint32_t box[2] = { 64, 8 }, es[2] = { 1, 1 };
  CUresult r = ((enc_t)fn)((CUtensorMap*)&tm, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, p + off, gd, gs, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                           CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (getenv("K16")) k16<<<1, 128>>>(tm,tm,tm,tm,tm,tm,tm,tm,tm,tm,tm,tm,tm,tm,tm,tm, x, out); else k<<<1, 128>>>(tm, x, out);
  cudaError_t e = cudaDeviceSynchronize();
  printf("dims0=%lld x=%d stride=%lld off=%lld: encode %d, kernel %s\n", dims0, x, stride, off, (int)r, cudaGetErrorString(e));
  return 0;
}
