// Internals of the CUDA microkernels (included by the .cu files only): checked calls that turn a
// CUDA or cuBLAS status into an error message, owners of device/host buffers and events that free
// them on every path, and the cudaEvent timing loop. Errors are values here: nothing exits.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <utility>

#include "models/calibration/cuda/microbench.cuh"

namespace dnnsim::cuda_internal {

// Returned by the timing functions on failure (any negative value would do).
inline constexpr double kFailed = -1.0;

inline void set_error(DnnsimCudaError* error, const char* what, const char* text) {
  if (error != nullptr) std::snprintf(error->message, sizeof error->message, "%s: %s", what, text);
}

// True on success; otherwise records "<what>: <error string>" and returns false.
inline bool check(cudaError_t status, const char* what, DnnsimCudaError* error) {
  if (status == cudaSuccess) return true;
  set_error(error, what, cudaGetErrorString(status));
  return false;
}

inline bool check(cublasStatus_t status, const char* what, DnnsimCudaError* error) {
  if (status == CUBLAS_STATUS_SUCCESS) return true;
  set_error(error, what, cublasGetStatusString(status));
  return false;
}

// A kernel launch reports its errors through cudaGetLastError.
inline bool check_launch(const char* kernel, DnnsimCudaError* error) {
  return check(cudaGetLastError(), kernel, error);
}

// A CUDA or cuBLAS handle released by `Release` on every path (its status dropped: nothing to do
// about it); neither copied nor moved. The owners below make it.
template <class Handle, auto Release>
class Owned {
 public:
  Owned() = default;
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() {
    if (handle_ != nullptr) Release(handle_);
  }
  [[nodiscard]] Handle get() const { return handle_; }

 protected:
  Handle handle_ = nullptr;
};

// Device memory.
class DeviceBuffer : public Owned<void*, cudaFree> {
 public:
  bool allocate(std::size_t bytes, const char* what, DnnsimCudaError* error) {
    return check(cudaMalloc(&handle_, bytes), what, error);
  }
  template <class T>
  [[nodiscard]] T* as() const {
    return static_cast<T*>(handle_);
  }
};

// Page-locked host memory, so that copies run at the link's DMA rate.
class PinnedBuffer : public Owned<void*, cudaFreeHost> {
 public:
  bool allocate(std::size_t bytes, const char* what, DnnsimCudaError* error) {
    return check(cudaMallocHost(&handle_, bytes), what, error);
  }
};

class Stream : public Owned<cudaStream_t, cudaStreamDestroy> {
 public:
  bool create(DnnsimCudaError* error) {
    return check(cudaStreamCreateWithFlags(&handle_, cudaStreamNonBlocking), "cudaStreamCreate", error);
  }
};

class Event : public Owned<cudaEvent_t, cudaEventDestroy> {
 public:
  bool create(DnnsimCudaError* error) { return check(cudaEventCreate(&handle_), "cudaEventCreate", error); }
};

// Runs `launch(stream)` (which enqueues the operation and returns false with `error` filled when that
// fails) once to warm up (first-touch, lazy module loading, cuBLAS heuristics), then `repetitions`
// times between two events; returns the best elapsed time in seconds, or kFailed.
// cudaEventElapsedTime has a resolution of about 0.5 us, far below the smallest sizes swept.
template <class Launch>
double best_time(int repetitions, cudaStream_t stream, Launch&& launch, DnnsimCudaError* error) {
  Event start, stop;
  if (!start.create(error) || !stop.create(error)) return kFailed;
  if (!launch(stream) || !check(cudaStreamSynchronize(stream), "warm-up run", error)) return kFailed;
  double best = -1.0;
  for (int i = 0; i < (repetitions > 0 ? repetitions : 1); ++i) {
    if (!check(cudaEventRecord(start.get(), stream), "cudaEventRecord(start)", error)) return kFailed;
    if (!launch(stream)) return kFailed;
    if (!check(cudaEventRecord(stop.get(), stream), "cudaEventRecord(stop)", error)) return kFailed;
    if (!check(cudaEventSynchronize(stop.get()), "cudaEventSynchronize", error)) return kFailed;
    float milliseconds = 0.0f;
    if (!check(cudaEventElapsedTime(&milliseconds, start.get(), stop.get()), "cudaEventElapsedTime", error))
      return kFailed;
    const double seconds = static_cast<double>(milliseconds) * 1e-3;
    if (best < 0.0 || seconds < best) best = seconds;
  }
  return best;
}

// Blocks of 256 threads covering `elements` once; kernels use grid-stride loops, so the grid is
// capped (a few waves per SM are enough to saturate memory).
inline unsigned int grid_for(long long elements, int threads = 256) {
  long long blocks = (elements + threads - 1) / threads;
  constexpr long long kMaxBlocks = 1LL << 20;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  if (blocks < 1) blocks = 1;
  return static_cast<unsigned int>(blocks);
}

// Fills `count` values with a deterministic pseudo-random pattern in [-1, 1): inputs of zeros would
// let the hardware idle (lower power draws, higher clocks) and overstate the achieved rate.
__device__ inline float pattern_value(unsigned long long i) {
  unsigned int x = static_cast<unsigned int>(i * 2654435761ULL) ^ 0x9E3779B9u;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  return static_cast<float>(x >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

}  // namespace dnnsim::cuda_internal
