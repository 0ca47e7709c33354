// GEMM microbenchmarks: dnnsim's own shared-memory tiled FP32 kernel, and cuBLAS (cublasSgemm for
// fp32, cublasGemmEx for tf32/fp16/bf16), the library that frameworks call for matmul layers.
//
// The tiled kernel is the classic two-level blocking (Volkov & Demmel, "Benchmarking GPUs to tune
// dense linear algebra", SC 2008; the CUDA C Programming Guide's shared-memory matrix multiply):
// a 64 x 64 tile of C per block of 16 x 16 threads, each thread accumulating a 4 x 4 sub-block in
// registers, with 64 x 16 panels of A and 16 x 64 panels of B staged through shared memory. It
// reaches a fraction of cuBLAS (no double buffering, no vector loads, no tensor cores) and is
// there as a reference that does not depend on a vendor library: the gap between the two is itself
// a number worth reporting.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>

#include "models/calibration/cuda/cuda_support.cuh"

// The microbenchmark files are the helpers' only users: they read as part of that namespace.
using namespace dnnsim::cuda_internal;

namespace {

constexpr int kTileM = 64;     // rows of C per block
constexpr int kTileN = 64;     // columns of C per block
constexpr int kTileK = 16;     // depth of the shared-memory panels
constexpr int kThreads = 16;   // threads per block edge (16 x 16 = 256)
constexpr int kPerThread = 4;  // each thread owns 4 x 4 outputs, strided by kThreads

static_assert(kTileM == kThreads * kPerThread && kTileN == kThreads * kPerThread);

// Row-major C(m x n) = A(m x k) B(k x n). Thread (tx, ty) owns rows ty + 16 i and columns tx + 16 j
// of the tile: in a warp, the B reads are consecutive words and the A reads broadcasts, so the
// inner loop has no shared-memory bank conflicts; A is stored transposed with one word of padding,
// so the panel store is conflict-free too. Out-of-range elements are loaded as zeros.
__global__ void __launch_bounds__(kThreads* kThreads)
    tiled_sgemm(int m, int n, int k, const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c) {
  __shared__ float a_panel[kTileK][kTileM + 1];
  __shared__ float b_panel[kTileK][kTileN];
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int thread = ty * kThreads + tx;
  const int row0 = blockIdx.y * kTileM;
  const int col0 = blockIdx.x * kTileN;

  float acc[kPerThread][kPerThread] = {};
  for (int k0 = 0; k0 < k; k0 += kTileK) {
    for (int i = thread; i < kTileM * kTileK; i += kThreads * kThreads) {
      const int r = i / kTileK, kk = i % kTileK;
      const int gr = row0 + r, gk = k0 + kk;
      a_panel[kk][r] = (gr < m && gk < k) ? a[static_cast<std::size_t>(gr) * k + gk] : 0.0f;
    }
    for (int i = thread; i < kTileK * kTileN; i += kThreads * kThreads) {
      const int kk = i / kTileN, col = i % kTileN;
      const int gk = k0 + kk, gc = col0 + col;
      b_panel[kk][col] = (gk < k && gc < n) ? b[static_cast<std::size_t>(gk) * n + gc] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTileK; ++kk) {
      float a_reg[kPerThread], b_reg[kPerThread];
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) a_reg[i] = a_panel[kk][ty + i * kThreads];
#pragma unroll
      for (int j = 0; j < kPerThread; ++j) b_reg[j] = b_panel[kk][tx + j * kThreads];
#pragma unroll
      for (int i = 0; i < kPerThread; ++i)
#pragma unroll
        for (int j = 0; j < kPerThread; ++j) acc[i][j] = fmaf(a_reg[i], b_reg[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int row = row0 + ty + i * kThreads;
    if (row >= m) continue;
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const int col = col0 + tx + j * kThreads;
      if (col < n) c[static_cast<std::size_t>(row) * n + col] = acc[i][j];
    }
  }
}

template <class T>
__device__ T from_float(float value);
template <>
__device__ float from_float<float>(float value) {
  return value;
}
template <>
__device__ __half from_float<__half>(float value) {
  return __float2half(value);
}
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float value) {
  return __float2bfloat16(value);
}

template <class T>
__global__ void fill_pattern(T* data, long long count, unsigned long long seed) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    data[i] = from_float<T>(pattern_value(seed + static_cast<unsigned long long>(i)));
}

template <class T>
bool fill(DeviceBuffer& buffer, long long count, unsigned long long seed, cudaStream_t stream, DnnsimCudaError* error) {
  fill_pattern<T><<<grid_for(count), 256, 0, stream>>>(buffer.as<T>(), count, seed);
  return check_launch("fill_pattern", error);
}

// Allocates A, B, C of `a_count`, `b_count`, `c_count` elements of T and fills A and B.
template <class T>
bool prepare(long long a_count, long long b_count, long long c_count, DeviceBuffer& a, DeviceBuffer& b,
             DeviceBuffer& c, cudaStream_t stream, DnnsimCudaError* error) {
  return a.allocate(a_count * sizeof(T), "cudaMalloc(A)", error) &&
         b.allocate(b_count * sizeof(T), "cudaMalloc(B)", error) &&
         c.allocate(c_count * sizeof(T), "cudaMalloc(C)", error) && fill<T>(a, a_count, 1, stream, error) &&
         fill<T>(b, b_count, 1ULL << 40, stream, error);
}

// cuBLAS handle bound to one stream, destroyed on every path.
class Cublas : public Owned<cublasHandle_t, cublasDestroy> {
 public:
  bool create(cudaStream_t stream, cublasMath_t math, DnnsimCudaError* error) {
    return check(cublasCreate(&handle_), "cublasCreate", error) &&
           check(cublasSetStream(handle_, stream), "cublasSetStream", error) &&
           check(cublasSetMathMode(handle_, math), "cublasSetMathMode", error);
  }
};

double tiled_seconds(int m, int n, int k, int repetitions, cudaStream_t stream, DnnsimCudaError* error) {
  DeviceBuffer a, b, c;
  if (!prepare<float>(static_cast<long long>(m) * k, static_cast<long long>(k) * n, static_cast<long long>(m) * n, a,
                      b, c, stream, error))
    return kFailed;
  const dim3 block(kThreads, kThreads);
  const dim3 grid((n + kTileN - 1) / kTileN, (m + kTileM - 1) / kTileM);
  return best_time(
      repetitions, stream,
      [&](cudaStream_t s) {
        tiled_sgemm<<<grid, block, 0, s>>>(m, n, k, a.as<float>(), b.as<float>(), c.as<float>());
        return check_launch("tiled_sgemm", error);
      },
      error);
}

// cuBLAS GEMMs of one dtype on buffers allocated and filled once, large enough for every shape
// timed on them: A, B and C of up to `a_count`, `b_count`, `c_count` elements.
class CublasGemms {
 public:
  bool prepare(int dtype, long long a_count, long long b_count, long long c_count, cudaStream_t stream,
               DnnsimCudaError* error) {
    bool ready = false;
    switch (dtype) {
      case DNNSIM_CUDA_FP32:
        sgemm_ = true;
        ready = ::prepare<float>(a_count, b_count, c_count, a_, b_, c_, stream, error);
        break;
      case DNNSIM_CUDA_TF32:
        compute_ = CUBLAS_COMPUTE_32F_FAST_TF32;
        ready = ::prepare<float>(a_count, b_count, c_count, a_, b_, c_, stream, error);
        break;
      case DNNSIM_CUDA_FP16:
        type_ = CUDA_R_16F;
        ready = ::prepare<__half>(a_count, b_count, c_count, a_, b_, c_, stream, error);
        break;
      case DNNSIM_CUDA_BF16:
        type_ = CUDA_R_16BF;
        ready = ::prepare<__nv_bfloat16>(a_count, b_count, c_count, a_, b_, c_, stream, error);
        break;
      default:
        set_error(error, "dnnsim_cuda_gemm_seconds", "unknown dtype code");
        return false;
    }
    // CUBLAS_DEFAULT_MATH keeps cublasSgemm in true fp32 (TF32 only when asked for, CUDA >= 11).
    return ready && cublas_.create(stream, CUBLAS_DEFAULT_MATH, error);
  }

  // Column-major as cuBLAS expects: C(m x n) = op(A) op(B), A stored m x k (k x m when transposed),
  // B stored k x n (n x k when transposed), each with its rows as leading dimension; ldc = m.
  double seconds(int m, int n, int k, int layout, int repetitions, cudaStream_t stream, DnnsimCudaError* error) {
    const cublasOperation_t op_a = layout == DNNSIM_CUDA_TN ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_b = layout == DNNSIM_CUDA_NT ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int lda = op_a == CUBLAS_OP_N ? m : k;
    const int ldb = op_b == CUBLAS_OP_N ? k : n;
    const float alpha = 1.0f, beta = 0.0f;
    if (sgemm_)
      return best_time(
          repetitions, stream,
          [&](cudaStream_t) {
            return check(cublasSgemm(cublas_.get(), op_a, op_b, m, n, k, &alpha, a_.as<float>(), lda, b_.as<float>(),
                                     ldb, &beta, c_.as<float>(), m),
                         "cublasSgemm", error);
          },
          error);
    return best_time(
        repetitions, stream,
        [&](cudaStream_t) {
          return check(cublasGemmEx(cublas_.get(), op_a, op_b, m, n, k, &alpha, a_.get(), type_, lda, b_.get(), type_,
                                    ldb, &beta, c_.get(), type_, m, compute_, CUBLAS_GEMM_DEFAULT),
                       "cublasGemmEx", error);
        },
        error);
  }

 private:
  DeviceBuffer a_, b_, c_;
  bool sgemm_ = false;
  cudaDataType_t type_ = CUDA_R_32F;
  cublasComputeType_t compute_ = CUBLAS_COMPUTE_32F;
  Cublas cublas_;
};

double cublas_seconds(int m, int n, int k, int dtype, int repetitions, cudaStream_t stream, DnnsimCudaError* error) {
  CublasGemms gemms;
  if (!gemms.prepare(dtype, static_cast<long long>(m) * k, static_cast<long long>(k) * n,
                     static_cast<long long>(m) * n, stream, error))
    return kFailed;
  return gemms.seconds(m, n, k, DNNSIM_CUDA_NN, repetitions, stream, error);
}

}  // namespace

extern "C" double dnnsim_cuda_gemm_seconds(int device, int m, int n, int k, int dtype, bool use_cublas, int repetitions,
                                           DnnsimCudaError* error) {
  if (m <= 0 || n <= 0 || k <= 0) {
    set_error(error, "dnnsim_cuda_gemm_seconds", "matrix dimensions must be positive");
    return kFailed;
  }
  if (!use_cublas && dtype != DNNSIM_CUDA_FP32) {
    set_error(error, "dnnsim_cuda_gemm_seconds", "the tiled kernel is fp32 only");
    return kFailed;
  }
  if (!check(cudaSetDevice(device), "cudaSetDevice", error)) return kFailed;
  Stream stream;
  if (!stream.create(error)) return kFailed;
  return use_cublas ? cublas_seconds(m, n, k, dtype, repetitions, stream.get(), error)
                    : tiled_seconds(m, n, k, repetitions, stream.get(), error);
}

extern "C" bool dnnsim_cuda_gemm_grid_seconds(int device, int dtype, int layout, const int* dims, int count,
                                              int repetitions, double* seconds, DnnsimCudaError* error) {
  // Arguments first, so that a caller's mistake is reported the same with or without a device.
  if (dims == nullptr || seconds == nullptr || count <= 0) {
    set_error(error, "dnnsim_cuda_gemm_grid_seconds", "needs at least one dimension and room for the times");
    return false;
  }
  if (layout != DNNSIM_CUDA_NN && layout != DNNSIM_CUDA_NT && layout != DNNSIM_CUDA_TN) {
    set_error(error, "dnnsim_cuda_gemm_grid_seconds", "unknown layout code");
    return false;
  }
  int largest = 0;
  for (int i = 0; i < count; ++i) {
    if (dims[i] <= 0) {
      set_error(error, "dnnsim_cuda_gemm_grid_seconds", "matrix dimensions must be positive");
      return false;
    }
    if (dims[i] > largest) largest = dims[i];
  }
  if (!check(cudaSetDevice(device), "cudaSetDevice", error)) return false;
  Stream stream;
  if (!stream.create(error)) return false;
  const long long square = static_cast<long long>(largest) * largest;
  CublasGemms gemms;
  if (!gemms.prepare(dtype, square, square, square, stream.get(), error)) return false;
  for (int i = 0; i < count; ++i)
    for (int j = 0; j < count; ++j)
      for (int l = 0; l < count; ++l) {
        const double time = gemms.seconds(dims[i], dims[j], dims[l], layout, repetitions, stream.get(), error);
        if (time < 0) return false;
        seconds[(static_cast<long long>(i) * count + j) * count + l] = time;
      }
  return true;
}
