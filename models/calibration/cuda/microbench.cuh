// The boundary between the CUDA microkernels (C++17, compiled by nvcc) and the C++20 backend
// (cuda_backend.cc): plain functions over plain types, no project header and no CUDA header, so
// both sides compile it. docs/calibration-cuda.md describes the kernels and their timing.
//
// Conventions of every timing function:
// - it selects `device` (cudaSetDevice), allocates its buffers, fills the inputs, runs the operation
//   once to warm up, then `repetitions` times, each between two cudaEvents on one stream, and
//   returns the BEST (smallest) elapsed time in seconds; the buffers are freed on every path;
// - on failure it returns a negative value and writes "<call>: <CUDA or cuBLAS error text>" to
//   `error` (which may be null); it never exits or aborts.
#pragma once

extern "C" {

// Error text of the last failed call, e.g. "cudaMalloc(a, 1073741824 B): out of memory".
struct DnnsimCudaError {
  char message[512];
};

// Element types of the GEMM benchmark. tf32 runs on fp32 data with TF32 tensor-core math.
enum DnnsimCudaDtype { DNNSIM_CUDA_FP32 = 0, DNNSIM_CUDA_FP16 = 1, DNNSIM_CUDA_BF16 = 2, DNNSIM_CUDA_TF32 = 3 };

// Operand layouts of the GEMM shape grid, as dnnsim's GemmOp (models/program/task_graph.hpp):
// C = A·B, C = A·Bᵀ, C = Aᵀ·B, cuBLAS's (N, N), (N, T) and (T, N).
enum DnnsimCudaGemmLayout { DNNSIM_CUDA_NN = 0, DNNSIM_CUDA_NT = 1, DNNSIM_CUDA_TN = 2 };

// Directions of cudaMemcpy: host memory is pinned (cudaMallocHost).
enum DnnsimCudaCopy {
  DNNSIM_CUDA_HOST_TO_DEVICE = 0,
  DNNSIM_CUDA_DEVICE_TO_HOST = 1,
  DNNSIM_CUDA_DEVICE_TO_DEVICE = 2
};

struct DnnsimCudaDeviceInfo {
  char name[256];                   // cudaDeviceProp::name, e.g. "NVIDIA A100-SXM4-80GB"
  int major, minor;                 // compute capability
  int multiprocessors;              // SM count
  unsigned long long total_memory;  // bytes
  unsigned long long free_memory;   // bytes, cudaMemGetInfo at the time of the call
};

// The number of CUDA devices (>= 0), or -1 when the runtime reports an error: no driver
// (cudaErrorInsufficientDriver), a stub driver, no device (cudaErrorNoDevice), … with `error` filled.
int dnnsim_cuda_device_count(DnnsimCudaError* error);

// Properties of `device`; false with `error` filled on failure.
bool dnnsim_cuda_device_info(int device, DnnsimCudaDeviceInfo* info, DnnsimCudaError* error);

// Whether this build's kernels can run on `device`: false (with the CUDA reason) when the binary
// holds no SASS or PTX for the device's architecture (see CMAKE_CUDA_ARCHITECTURES).
bool dnnsim_cuda_kernels_runnable(int device, DnnsimCudaError* error);

// C(m x n) = A(m x k) B(k x n), 2 m n k FLOPs. `use_cublas`: cublasSgemm (fp32, default math, no
// TF32) or cublasGemmEx (fp16/bf16 inputs and output with fp32 accumulation; tf32 as fp32 data with
// CUBLAS_COMPUTE_32F_FAST_TF32). Otherwise dnnsim's own shared-memory tiled kernel (fp32 only).
double dnnsim_cuda_gemm_seconds(int device, int m, int n, int k, int dtype, bool use_cublas, int repetitions,
                                DnnsimCudaError* error);

// The GEMM shape grid: cuBLAS in `layout` (DnnsimCudaGemmLayout) for every (m, n, k) of
// dims[0..count) cubed, m-major (seconds[(i·count + j)·count + l] for m = dims[i], n = dims[j],
// k = dims[l]), each the best of `repetitions` after a warm-up, as dnnsim_cuda_gemm_seconds times
// one. One cuBLAS handle and one set of buffers, sized for the largest dimension, serve the whole
// grid (a handle per shape would cost more than the shapes). False with `error` on failure.
bool dnnsim_cuda_gemm_grid_seconds(int device, int dtype, int layout, const int* dims, int count, int repetitions,
                                   double* seconds, DnnsimCudaError* error);

// STREAM triad a[i] = b[i] + s * c[i] on `elements` floats: 3 x 4 bytes moved per element.
double dnnsim_cuda_triad_seconds(int device, long long elements, int repetitions, DnnsimCudaError* error);

// Elementwise y[i] = max(alpha * x[i] + beta, 0) on `elements` floats (bias + ReLU): one FMA
// (2 FLOPs) and 8 bytes per element.
double dnnsim_cuda_elementwise_seconds(int device, long long elements, int repetitions, DnnsimCudaError* error);

// cudaMemcpyAsync of `bytes` in direction `kind` (DnnsimCudaCopy).
double dnnsim_cuda_memcpy_seconds(int device, long long bytes, int kind, int repetitions, DnnsimCudaError* error);

// Whether `source` can access `destination`'s memory directly (cudaDeviceCanAccessPeer).
bool dnnsim_cuda_peer_access(int source, int destination);

// cudaMemcpyPeerAsync of `bytes` from `source` to `destination`, after enabling peer access.
double dnnsim_cuda_peer_copy_seconds(int source, int destination, long long bytes, int repetitions,
                                     DnnsimCudaError* error);

}  // extern "C"

// Work per element of the memory kernels, so that both sides count it the same way.
inline constexpr int kDnnsimTriadBytesPerElement = 12;       // read b, c; write a (fp32)
inline constexpr int kDnnsimElementwiseBytesPerElement = 8;  // read x; write y (fp32)
inline constexpr int kDnnsimElementwiseFlopsPerElement = 2;  // one fused multiply-add
