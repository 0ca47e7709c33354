// Device discovery for the CUDA calibration backend: how many devices, what they are, whether this
// build's kernels run on them. On a machine without a GPU these are the only calls that execute.
#include <cstring>

#include "models/calibration/cuda/cuda_support.cuh"

// The microbenchmark files are the helpers' only users: they read as part of that namespace.
using namespace dnnsim::cuda_internal;

namespace {

// The smallest kernel of the build: dnnsim_cuda_kernels_runnable asks for its attributes, which
// fails when the fat binary has no image for the device.
__global__ void probe_kernel(int* out) {
  if (out != nullptr) *out = 1;
}

}  // namespace

extern "C" int dnnsim_cuda_device_count(DnnsimCudaError* error) {
  int count = 0;
  // cudaErrorNoDevice, cudaErrorInsufficientDriver (no libcuda.so), cudaErrorStubLibrary, … all
  // mean "nothing to run on"; the caller reports the text.
  if (!check(cudaGetDeviceCount(&count), "cudaGetDeviceCount", error)) return -1;
  return count;
}

extern "C" bool dnnsim_cuda_device_info(int device, DnnsimCudaDeviceInfo* info, DnnsimCudaError* error) {
  cudaDeviceProp properties{};
  if (!check(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties", error)) return false;
  if (!check(cudaSetDevice(device), "cudaSetDevice", error)) return false;
  std::size_t free_bytes = 0, total_bytes = 0;
  if (!check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo", error)) return false;
  std::memset(info, 0, sizeof *info);
  std::strncpy(info->name, properties.name, sizeof info->name - 1);
  info->major = properties.major;
  info->minor = properties.minor;
  info->multiprocessors = properties.multiProcessorCount;
  info->total_memory = properties.totalGlobalMem;
  info->free_memory = free_bytes;
  return true;
}

extern "C" bool dnnsim_cuda_kernels_runnable(int device, DnnsimCudaError* error) {
  if (!check(cudaSetDevice(device), "cudaSetDevice", error)) return false;
  cudaFuncAttributes attributes{};
  return check(cudaFuncGetAttributes(&attributes, probe_kernel), "cudaFuncGetAttributes(probe kernel)", error);
}
