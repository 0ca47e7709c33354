// Tests of the CUDA calibration backend. They run on any machine the library builds on: without a
// device (CI, this VM) they check that the backend says so and that every microkernel entry point
// returns an error instead of crashing; with a device, the quick sweep runs. The name mapping is a
// pure function and is tested everywhere.
#include "models/calibration/cuda/cuda_backend.hpp"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/calibration/cuda/microbench.cuh"
#include "models/common/builtin_registry.hpp"
#include "models/hardware/catalog.hpp"

namespace dnnsim {
namespace {

bool device_present() {
  DnnsimCudaError error{};
  return dnnsim_cuda_device_count(&error) > 0;
}

const CalibrationBackendRegistry& cuda_registry() {
  return builtin_registry<CalibrationBackendRegistry, register_cuda_calibration_backend>("calibration backend");
}

const CalibrationBackend& cuda_backend() { return *cuda_registry().at("cuda").value; }

TEST(CudaBackend, RegistersUnderTheNameCuda) {
  CalibrationBackendRegistry registry("calibration backend");
  register_cuda_calibration_backend(registry);
  ASSERT_EQ(registry.names(), std::vector<std::string>{"cuda"});
  EXPECT_NE(registry.at("cuda").description.find("cudaEvents"), std::string::npos);
  EXPECT_NE(registry.at("cuda").value, nullptr);
}

TEST(CudaBackend, WithoutDeviceIsUnavailableAndSaysWhy) {
  if (device_present()) GTEST_SKIP() << "a CUDA device is present";
  std::string why;
  EXPECT_FALSE(cuda_backend().available(why));
  // "no CUDA device is present", followed by the runtime's reason when it gave an error, e.g.
  // "(cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime version)".
  EXPECT_NE(why.find("no CUDA device"), std::string::npos) << why;
  EXPECT_EQ(cuda_backend().device(), "cuda");
}

TEST(CudaBackend, WithoutDeviceRunThrowsTheReasonInsteadOfTouchingTheGpu) {
  if (device_present()) GTEST_SKIP() << "a CUDA device is present";
  try {
    (void)cuda_backend().run(/*quick=*/true, cuda_registry().defaults("cuda"), {});
    FAIL() << "run() returned without a device";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
  }
}

// Every entry point returns an error value (negative time, false) with a message: nothing exits.
TEST(CudaMicrobench, WithoutDeviceEveryEntryPointReturnsAnError) {
  if (device_present()) GTEST_SKIP() << "a CUDA device is present";
  DnnsimCudaError error{};
  EXPECT_EQ(dnnsim_cuda_device_count(&error), -1);
  EXPECT_NE(std::string(error.message).find("cudaGetDeviceCount"), std::string::npos) << error.message;

  const auto fails = [](double seconds, const DnnsimCudaError& e) { return seconds < 0 && e.message[0] != '\0'; };
  error = {};
  EXPECT_TRUE(fails(dnnsim_cuda_gemm_seconds(0, 64, 64, 64, DNNSIM_CUDA_FP32, true, 1, &error), error));
  error = {};
  EXPECT_TRUE(fails(dnnsim_cuda_gemm_seconds(0, 64, 64, 64, DNNSIM_CUDA_FP32, false, 1, &error), error));
  error = {};
  const int dims[] = {16, 64};
  double grid[8] = {};
  EXPECT_FALSE(dnnsim_cuda_gemm_grid_seconds(0, DNNSIM_CUDA_FP16, DNNSIM_CUDA_NT, dims, 2, 1, grid, &error));
  EXPECT_NE(error.message[0], '\0');
  error = {};
  EXPECT_TRUE(fails(dnnsim_cuda_triad_seconds(0, 1024, 1, &error), error));
  error = {};
  EXPECT_TRUE(fails(dnnsim_cuda_elementwise_seconds(0, 1024, 1, &error), error));
  error = {};
  EXPECT_TRUE(fails(dnnsim_cuda_memcpy_seconds(0, 4096, DNNSIM_CUDA_HOST_TO_DEVICE, 1, &error), error));
  error = {};
  EXPECT_TRUE(fails(dnnsim_cuda_peer_copy_seconds(0, 1, 4096, 1, &error), error));
  EXPECT_FALSE(dnnsim_cuda_peer_access(0, 1));
  DnnsimCudaDeviceInfo info{};
  error = {};
  EXPECT_FALSE(dnnsim_cuda_device_info(0, &info, &error));
  EXPECT_NE(error.message[0], '\0');
  // A null error pointer is allowed.
  EXPECT_LT(dnnsim_cuda_triad_seconds(0, 1024, 1, nullptr), 0);
}

// Argument errors are reported before any CUDA call, device or not.
TEST(CudaMicrobench, RejectsBadArguments) {
  DnnsimCudaError error{};
  EXPECT_LT(dnnsim_cuda_gemm_seconds(0, 0, 64, 64, DNNSIM_CUDA_FP32, true, 1, &error), 0);
  EXPECT_NE(std::string(error.message).find("positive"), std::string::npos) << error.message;
  error = {};
  EXPECT_LT(dnnsim_cuda_gemm_seconds(0, 64, 64, 64, DNNSIM_CUDA_FP16, false, 1, &error), 0);
  EXPECT_NE(std::string(error.message).find("fp32 only"), std::string::npos) << error.message;
  const int dims[] = {16, 0};
  double grid[8] = {};
  error = {};
  EXPECT_FALSE(dnnsim_cuda_gemm_grid_seconds(0, DNNSIM_CUDA_FP32, DNNSIM_CUDA_NN, dims, 2, 1, grid, &error));
  EXPECT_NE(std::string(error.message).find("positive"), std::string::npos) << error.message;
  error = {};
  EXPECT_FALSE(dnnsim_cuda_gemm_grid_seconds(0, DNNSIM_CUDA_FP32, 7, dims, 1, 1, grid, &error));
  EXPECT_NE(std::string(error.message).find("unknown layout"), std::string::npos) << error.message;
  error = {};
  EXPECT_FALSE(dnnsim_cuda_gemm_grid_seconds(0, DNNSIM_CUDA_FP32, DNNSIM_CUDA_NN, dims, 0, 1, grid, &error));
  EXPECT_NE(std::string(error.message).find("at least one dimension"), std::string::npos) << error.message;
}

// With a device: the quick sweep yields positive times for each kind of sample.
TEST(CudaBackend, WithDeviceQuickSweepMeasuresEveryKernel) {
  std::string why;
  if (!cuda_backend().available(why)) GTEST_SKIP() << why;
  const std::vector<KernelSample> samples = cuda_backend().run(/*quick=*/true, cuda_registry().defaults("cuda"), {});
  std::set<std::string> kernels;
  for (const KernelSample& sample : samples) {
    EXPECT_GT(sample.time.value(), 0) << sample.kernel << " at " << sample.size;
    EXPECT_GT(sample.size, 0) << sample.kernel;
    kernels.insert(sample.kernel);
  }
  for (const char* kernel :
       {"gemm", "gemm_shape", "gemm_tiled", "stream_triad", "bias_relu", "memcpy_h2d", "memcpy_d2h", "memcpy_d2d"})
    EXPECT_TRUE(kernels.contains(kernel)) << kernel;
  // The quick shape grids (2 × 2 × 2 shapes per dtype and layout) make full grids in the fitted table.
  const CalibrationTable table = fit_calibration(cuda_backend().device(), samples, std::nullopt, std::nullopt, "test");
  for (const GemmOp layout : {GemmOp::nn, GemmOp::nt, GemmOp::tn})
    EXPECT_TRUE(table.gemm.contains({Dtype::fp32, layout})) << gemm_op_name(layout);
  EXPECT_FALSE(cuda_backend().device().empty());
}

// Names as cudaDeviceProp::name reports them (nvidia-smi prints the same strings).
TEST(CatalogNameForDevice, MapsTheCommonNamesOfEveryCatalogGpu) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"Tesla P100-SXM2-16GB", "P100"},
      {"Tesla P100-PCIE-16GB", "P100"},
      {"Tesla P100-PCIE-12GB", "P100"},
      {"Tesla V100-SXM2-16GB", "V100-16GB"},
      {"Tesla V100-PCIE-16GB", "V100-16GB"},
      {"Tesla V100-SXM2-32GB", "V100-32GB"},
      {"Tesla V100-PCIE-32GB", "V100-32GB"},
      {"Tesla V100S-PCIE-32GB", "V100-32GB"},
      {"Tesla V100-SXM3-32GB", "V100-32GB"},
      {"Tesla T4", "T4"},
      {"NVIDIA A10", "A10"},
      {"NVIDIA A10G", "A10"},
      {"NVIDIA A100-SXM4-40GB", "A100-40GB-SXM"},
      {"NVIDIA A100-PCIE-40GB", "A100-40GB-SXM"},
      {"NVIDIA A100-SXM4-80GB", "A100-80GB-SXM"},
      {"NVIDIA A100 80GB PCIe", "A100-80GB-SXM"},
      {"NVIDIA GeForce RTX 3090", "RTX3090"},
      {"NVIDIA GeForce RTX 3090 Ti", "RTX3090"},
      {"NVIDIA L4", "L4"},
      {"NVIDIA GeForce RTX 4090", "RTX4090"},
      {"NVIDIA H100 PCIe", "H100-PCIe"},
      {"NVIDIA H100 NVL", "H100-PCIe"},
      {"NVIDIA H100 80GB HBM3", "H100-SXM"},
      {"NVIDIA H100-SXM5-80GB", "H100-SXM"},
      {"NVIDIA H200", "H200"},
      {"NVIDIA H200 NVL", "H200"},
      {"NVIDIA B200", "B200"},
      {"NVIDIA B300 SXM6 AC", "B300"},
      {"NVIDIA GB200", "GB200"},
      {"NVIDIA GB300", "GB300"},
      {"nvidia a100-sxm4-80gb", "A100-80GB-SXM"},  // case does not matter
      {"NVIDIA Tegra X2", "Jetson-TX2"},
  };
  std::set<std::string> reached;
  for (const auto& [cuda_name, catalog_name] : cases) {
    EXPECT_EQ(catalog_name_for_device(cuda_name), catalog_name) << cuda_name;
    EXPECT_NE(HardwareCatalog::builtin().find_gpu(catalog_name), nullptr) << catalog_name;
    reached.insert(catalog_name);
  }
  // Every catalog GPU is the image of at least one CUDA name, but the Jetson Nano: its CUDA name,
  // "NVIDIA Tegra X1", is also the Jetson TX1's (a different core count), so it stays raw.
  EXPECT_EQ(catalog_name_for_device("NVIDIA Tegra X1"), "NVIDIA Tegra X1");
  for (const std::string& gpu : HardwareCatalog::builtin().gpu_names())
    if (gpu != "Jetson-Nano") {
      EXPECT_TRUE(reached.contains(gpu)) << gpu << " has no CUDA name mapping to it";
    }
}

// Whole tokens only: a longer model number sharing a prefix is another GPU, and so is a laptop part.
TEST(CatalogNameForDevice, KeepsTheRawNameWhenNoEntryMatches) {
  for (const std::string name :
       {"NVIDIA L40S", "NVIDIA L40", "NVIDIA A40", "NVIDIA GH200 480GB", "NVIDIA H800", "NVIDIA RTX A6000",
        "NVIDIA GeForce RTX 4090 Laptop GPU", "NVIDIA GeForce RTX 3080", "Quadro RTX 8000", ""})
    EXPECT_EQ(catalog_name_for_device(name), name);
}

}  // namespace
}  // namespace dnnsim
