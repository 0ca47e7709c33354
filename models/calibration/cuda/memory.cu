// Memory microbenchmarks: STREAM triad (McCalpin, "Memory bandwidth and machine balance in current
// high performance computers", IEEE TCCA Newsletter 1995) for DRAM bandwidth, a bias + ReLU
// elementwise kernel (the shape of most non-matmul layers), and the copy engines: cudaMemcpy between
// pinned host memory and the device, within the device, and between peers.
#include <cstddef>

#include "models/calibration/cuda/cuda_support.cuh"

// The microbenchmark files are the helpers' only users: they read as part of that namespace.
using namespace dnnsim::cuda_internal;

namespace {

__global__ void fill_floats(float* data, long long count, unsigned long long seed) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    data[i] = pattern_value(seed + static_cast<unsigned long long>(i));
}

// a = b + scalar * c: two loads and one store per element, as STREAM counts it (12 bytes in fp32).
__global__ void stream_triad(float* __restrict__ a, const float* __restrict__ b, const float* __restrict__ c,
                             float scalar, long long count) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    a[i] = fmaf(scalar, c[i], b[i]);
}

// y = max(alpha x + beta, 0): one FMA per element, 8 bytes moved.
__global__ void bias_relu(float* __restrict__ y, const float* __restrict__ x, float alpha, float beta,
                          long long count) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    y[i] = fmaxf(fmaf(alpha, x[i], beta), 0.0f);
}

bool allocate_filled(DeviceBuffer& buffer, long long count, unsigned long long seed, const char* what,
                     cudaStream_t stream, DnnsimCudaError* error) {
  if (!buffer.allocate(static_cast<std::size_t>(count) * sizeof(float), what, error)) return false;
  fill_floats<<<grid_for(count), 256, 0, stream>>>(buffer.as<float>(), count, seed);
  return check_launch("fill_floats", error);
}

bool begin(int device, long long count, const char* function, Stream& stream, DnnsimCudaError* error) {
  if (count <= 0) {
    set_error(error, function, "the size must be positive");
    return false;
  }
  return check(cudaSetDevice(device), "cudaSetDevice", error) && stream.create(error);
}

}  // namespace

extern "C" double dnnsim_cuda_triad_seconds(int device, long long elements, int repetitions, DnnsimCudaError* error) {
  Stream stream;
  if (!begin(device, elements, "dnnsim_cuda_triad_seconds", stream, error)) return kFailed;
  DeviceBuffer a, b, c;
  if (!a.allocate(static_cast<std::size_t>(elements) * sizeof(float), "cudaMalloc(a)", error) ||
      !allocate_filled(b, elements, 1, "cudaMalloc(b)", stream.get(), error) ||
      !allocate_filled(c, elements, 1ULL << 40, "cudaMalloc(c)", stream.get(), error))
    return kFailed;
  return best_time(
      repetitions, stream.get(),
      [&](cudaStream_t s) {
        stream_triad<<<grid_for(elements), 256, 0, s>>>(a.as<float>(), b.as<float>(), c.as<float>(), 3.0f, elements);
        return check_launch("stream_triad", error);
      },
      error);
}

extern "C" double dnnsim_cuda_elementwise_seconds(int device, long long elements, int repetitions,
                                                  DnnsimCudaError* error) {
  Stream stream;
  if (!begin(device, elements, "dnnsim_cuda_elementwise_seconds", stream, error)) return kFailed;
  DeviceBuffer x, y;
  if (!allocate_filled(x, elements, 7, "cudaMalloc(x)", stream.get(), error) ||
      !y.allocate(static_cast<std::size_t>(elements) * sizeof(float), "cudaMalloc(y)", error))
    return kFailed;
  return best_time(
      repetitions, stream.get(),
      [&](cudaStream_t s) {
        bias_relu<<<grid_for(elements), 256, 0, s>>>(y.as<float>(), x.as<float>(), 1.5f, -0.25f, elements);
        return check_launch("bias_relu", error);
      },
      error);
}

extern "C" double dnnsim_cuda_memcpy_seconds(int device, long long bytes, int kind, int repetitions,
                                             DnnsimCudaError* error) {
  Stream stream;
  if (!begin(device, bytes, "dnnsim_cuda_memcpy_seconds", stream, error)) return kFailed;
  const auto size = static_cast<std::size_t>(bytes);
  DeviceBuffer device_buffer, device_other;
  PinnedBuffer host;
  void* destination = nullptr;
  const void* source = nullptr;
  cudaMemcpyKind direction = cudaMemcpyDefault;
  switch (kind) {
    case DNNSIM_CUDA_HOST_TO_DEVICE:
    case DNNSIM_CUDA_DEVICE_TO_HOST:
      if (!device_buffer.allocate(size, "cudaMalloc(device buffer)", error) ||
          !host.allocate(size, "cudaMallocHost(pinned buffer)", error))
        return kFailed;
      // Touch the pinned pages so that the first timed copy does not pay for faults.
      if (!check(cudaMemsetAsync(device_buffer.get(), 1, size, stream.get()), "cudaMemsetAsync", error) ||
          !check(cudaMemcpyAsync(host.get(), device_buffer.get(), size, cudaMemcpyDeviceToHost, stream.get()),
                 "cudaMemcpyAsync(initial)", error))
        return kFailed;
      if (kind == DNNSIM_CUDA_HOST_TO_DEVICE) {
        destination = device_buffer.get();
        source = host.get();
        direction = cudaMemcpyHostToDevice;
      } else {
        destination = host.get();
        source = device_buffer.get();
        direction = cudaMemcpyDeviceToHost;
      }
      break;
    case DNNSIM_CUDA_DEVICE_TO_DEVICE:
      if (!device_buffer.allocate(size, "cudaMalloc(source)", error) ||
          !device_other.allocate(size, "cudaMalloc(destination)", error) ||
          !check(cudaMemsetAsync(device_buffer.get(), 1, size, stream.get()), "cudaMemsetAsync", error))
        return kFailed;
      destination = device_other.get();
      source = device_buffer.get();
      direction = cudaMemcpyDeviceToDevice;
      break;
    default:
      set_error(error, "dnnsim_cuda_memcpy_seconds", "unknown copy direction code");
      return kFailed;
  }
  return best_time(
      repetitions, stream.get(),
      [&](cudaStream_t s) {
        return check(cudaMemcpyAsync(destination, source, size, direction, s), "cudaMemcpyAsync", error);
      },
      error);
}

extern "C" bool dnnsim_cuda_peer_access(int source, int destination) {
  int can_access = 0;
  if (source == destination) return false;
  if (cudaDeviceCanAccessPeer(&can_access, source, destination) != cudaSuccess) {
    cudaGetLastError();  // clear the error: the answer is "no"
    return false;
  }
  return can_access != 0;
}

namespace {

// Enables access from the current device to `peer`; enabling twice is not an error.
bool enable_peer(int device, int peer, DnnsimCudaError* error) {
  if (!check(cudaSetDevice(device), "cudaSetDevice", error)) return false;
  const cudaError_t status = cudaDeviceEnablePeerAccess(peer, 0);
  if (status == cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();
    return true;
  }
  return check(status, "cudaDeviceEnablePeerAccess", error);
}

}  // namespace

extern "C" double dnnsim_cuda_peer_copy_seconds(int source, int destination, long long bytes, int repetitions,
                                                DnnsimCudaError* error) {
  if (!dnnsim_cuda_peer_access(source, destination)) {
    set_error(error, "dnnsim_cuda_peer_copy_seconds", "the devices have no peer access");
    return kFailed;
  }
  if (!enable_peer(destination, source, error) || !enable_peer(source, destination, error)) return kFailed;
  // enable_peer(source, …) left `source` current: the stream, events and timing live on it.
  Stream stream;
  if (!begin(source, bytes, "dnnsim_cuda_peer_copy_seconds", stream, error)) return kFailed;
  const auto size = static_cast<std::size_t>(bytes);
  DeviceBuffer from, to;
  if (!from.allocate(size, "cudaMalloc(source device)", error) ||
      !check(cudaMemsetAsync(from.get(), 1, size, stream.get()), "cudaMemsetAsync", error))
    return kFailed;
  if (!check(cudaSetDevice(destination), "cudaSetDevice(destination)", error) ||
      !to.allocate(size, "cudaMalloc(destination device)", error) ||
      !check(cudaSetDevice(source), "cudaSetDevice(source)", error))
    return kFailed;
  return best_time(
      repetitions, stream.get(),
      [&](cudaStream_t s) {
        return check(cudaMemcpyPeerAsync(to.get(), destination, from.get(), source, size, s), "cudaMemcpyPeerAsync",
                     error);
      },
      error);
}
