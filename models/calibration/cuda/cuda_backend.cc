// The CUDA calibration backend on top of the microkernels of microbench.cuh. This file is C++20 and
// compiled by the host compiler; it is a .cc (not .cpp) so that the models/ glob, which builds
// without CUDA, leaves it out. The sweep and the meaning of each sample are in
// docs/calibration-cuda.md.
#include "models/calibration/cuda/cuda_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "models/calibration/cuda/microbench.cuh"
#include "models/hardware/catalog.hpp"

namespace dnnsim {
namespace {

// ---- Device names -> catalog entries ------------------------------------------------------------

// CUDA names look like "NVIDIA A100-SXM4-80GB", "Tesla V100-PCIE-32GB", "NVIDIA GeForce RTX 3090 Ti",
// "NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe". They are split into upper-case tokens at spaces, '-'
// and '_', and matched by whole tokens, so that "A10" does not match "A100", "L4" not "L40S" and
// "H200" not "GH200".
struct DeviceRule {
  std::string_view chip;       // a token naming the chip
  std::string_view qualifier;  // a second token that must also be present; empty = none
  std::string_view catalog;    // catalog GPU name
};

// First match wins, so a qualified rule precedes the chip's default.
constexpr std::array kDeviceRules{
    DeviceRule{"P100", "", "P100"},               // SXM2 16 GB and PCIe 12/16 GB: the catalog has the SXM2 part
    DeviceRule{"V100", "32GB", "V100-32GB"},      // "Tesla V100-SXM2-32GB", "Tesla V100-PCIE-32GB"
    DeviceRule{"V100S", "", "V100-32GB"},         // "Tesla V100S-PCIE-32GB"
    DeviceRule{"V100", "", "V100-16GB"},          // "Tesla V100-SXM2-16GB", "Tesla V100-PCIE-16GB"
    DeviceRule{"T4", "", "T4"},                   // "Tesla T4"
    DeviceRule{"A10", "", "A10"},                 // "NVIDIA A10"
    DeviceRule{"A10G", "", "A10"},                // "NVIDIA A10G" (AWS variant of the GA102 A10)
    DeviceRule{"A100", "80GB", "A100-80GB-SXM"},  // "NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe"
    DeviceRule{"A100", "", "A100-40GB-SXM"},      // "NVIDIA A100-SXM4-40GB", "NVIDIA A100-PCIE-40GB"
    DeviceRule{"3090", "", "RTX3090"},            // "NVIDIA GeForce RTX 3090", "… RTX 3090 Ti"
    DeviceRule{"L4", "", "L4"},                   // "NVIDIA L4"
    DeviceRule{"4090", "", "RTX4090"},            // "NVIDIA GeForce RTX 4090"
    DeviceRule{"H100", "PCIE", "H100-PCIe"},      // "NVIDIA H100 PCIe"
    DeviceRule{"H100", "NVL", "H100-PCIe"},       // "NVIDIA H100 NVL": a PCIe card
    DeviceRule{"H100", "", "H100-SXM"},           // "NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5 80GB"
    DeviceRule{"H200", "", "H200"},               // "NVIDIA H200", "NVIDIA H200 NVL"
    DeviceRule{"B200", "", "B200"},               // "NVIDIA B200" (HGX/DGX B200)
    DeviceRule{"B300", "", "B300"},               // "NVIDIA B300 SXM6 AC" (HGX/DGX B300)
    DeviceRule{"GB200", "", "GB200"},             // "NVIDIA GB200" (a Blackwell GPU of a GB200 superchip)
    DeviceRule{"GB300", "", "GB300"},             // "NVIDIA GB300"
    DeviceRule{"X2", "TEGRA", "Jetson-TX2"},      // "NVIDIA Tegra X2" (deviceQuery on a Jetson TX2)
    // No rule for the Jetson Nano: CUDA names it "NVIDIA Tegra X1", as it does the Jetson TX1, whose
    // Tegra X1 has twice the CUDA cores; the raw name is kept.
};

// Tokens that mark a mobile part, a different chip under a desktop name ("… RTX 4090 Laptop GPU",
// "… with Max-Q Design", split into "MAX" and "Q").
constexpr std::array<std::string_view, 3> kMobileTokens{"LAPTOP", "MOBILE", "MAX"};

std::vector<std::string> name_tokens(const std::string& name) {
  std::vector<std::string> tokens;
  std::string current;
  for (const char raw : name) {
    const auto c = static_cast<unsigned char>(raw);
    if (std::isspace(c) || c == '-' || c == '_') {
      if (!current.empty()) tokens.push_back(std::move(current));
      current.clear();
    } else {
      current.push_back(static_cast<char>(std::toupper(c)));
    }
  }
  if (!current.empty()) tokens.push_back(std::move(current));
  return tokens;
}

// ---- The backend ---------------------------------------------------------------------------------

constexpr int kDevice = 0;  // the backend measures CUDA device 0 (and 0 -> 1 for peer copies)
constexpr std::string_view kNoDevice = "no CUDA device is present";

// Sizes of a sweep. The quick one keeps a test to a few seconds (most of it cuBLAS handle creation).
struct Sweep {
  std::vector<int> gemm_sizes;        // square m = n = k
  std::vector<int> grid_dims;         // the GEMM shape grids' m, n and k values
  int tiled_max_size;                 // the tiled kernel stops here (it is slow at 8192)
  std::vector<long long> elements;    // fp32 elements of the triad and elementwise kernels
  std::vector<long long> copy_bytes;  // bytes of each copy
  int repetitions;
};

Sweep sweep_for(bool quick) {
  if (quick) return Sweep{{128, 256, 512}, {64, 256}, 512, {1LL << 16, 1LL << 18, 1LL << 20}, {4096, 65536, 1 << 20}, 3};
  // The grid from a skinny 16 (a small batch, a head dimension) to 8,192 (a large model's hidden
  // size): 216 shapes per dtype and layout, three 8,192² buffers at most.
  Sweep sweep{{256, 512, 1024, 2048, 4096, 8192}, {16, 64, 256, 1024, 4096, 8192}, 4096, {}, {}, 10};
  for (long long n = 1LL << 16; n <= 1LL << 28; n *= 4) sweep.elements.push_back(n);  // 256 KiB … 1 GiB per array
  for (long long bytes = 4096; bytes <= 1LL << 30; bytes *= 4) sweep.copy_bytes.push_back(bytes);  // 4 KiB … 1 GiB
  return sweep;
}

struct GemmCase {
  Dtype dtype;
  int code;  // DnnsimCudaDtype
  int element_bytes;
  int min_major;  // compute capability needed (bf16 and TF32 came with Ampere)
};
constexpr std::array kGemmCases{
    GemmCase{Dtype::fp32, DNNSIM_CUDA_FP32, 4, 0},
    GemmCase{Dtype::tf32, DNNSIM_CUDA_TF32, 4, 8},
    GemmCase{Dtype::fp16, DNNSIM_CUDA_FP16, 2, 7},
    GemmCase{Dtype::bf16, DNNSIM_CUDA_BF16, 2, 8},
};

struct CopyCase {
  int code;  // DnnsimCudaCopy
  std::string_view kernel, kind;
  int buffers_on_device;
};
constexpr std::array kCopyCases{
    CopyCase{DNNSIM_CUDA_HOST_TO_DEVICE, "memcpy_h2d", "host_to_device", 1},
    CopyCase{DNNSIM_CUDA_DEVICE_TO_HOST, "memcpy_d2h", "device_to_host", 1},
    CopyCase{DNNSIM_CUDA_DEVICE_TO_DEVICE, "memcpy_d2d", "device_to_device", 2},
};

class CudaCalibrationBackend final : public CalibrationBackend {
 public:
  [[nodiscard]] bool available(std::string& why) const override {
    DnnsimCudaError error{};
    const int count = dnnsim_cuda_device_count(&error);
    if (count < 0) {
      why = fmt::format("{} ({})", kNoDevice, error.message);
      return false;
    }
    if (count == 0) {
      why = std::string(kNoDevice);
      return false;
    }
    DnnsimCudaDeviceInfo info{};
    if (!dnnsim_cuda_device_info(kDevice, &info, &error)) {
      why = fmt::format("CUDA device {} cannot be queried: {}", kDevice, error.message);
      return false;
    }
    if (!dnnsim_cuda_kernels_runnable(kDevice, &error)) {
      why = fmt::format(
          "CUDA device '{}' (compute capability {}.{}) cannot run this build's kernels ({}); rebuild with "
          "CMAKE_CUDA_ARCHITECTURES including {}{}",
          info.name, info.major, info.minor, error.message, info.major, info.minor);
      return false;
    }
    return true;
  }

  [[nodiscard]] std::vector<KernelSample> run(bool quick, const Options& options,
                                              const CalibrationProgress& progress) const override {
    if (std::string why; !available(why)) throw std::runtime_error(fmt::format("CUDA calibration: {}", why));
    DnnsimCudaDeviceInfo info{};
    DnnsimCudaError error{};
    if (!dnnsim_cuda_device_info(kDevice, &info, &error)) fail(info, error);
    // A size is measured when all its buffers fit in half of the memory free at the start.
    const auto fits = [&](double bytes) { return bytes <= 0.5 * static_cast<double>(info.free_memory); };
    Sweep sweep = sweep_for(quick);
    if (options.given("repetitions")) sweep.repetitions = static_cast<int>(options.integer("repetitions"));
    std::vector<KernelSample> samples;
    const auto add = [&](std::string_view kernel, std::string_view kind, Dtype dtype, double size, double seconds) {
      if (seconds < 0) fail(info, error);
      samples.push_back(KernelSample{std::string(kernel), std::string(kind), dtype, size, Seconds(seconds)});
    };

    const auto next = [&](std::string_view stage) { report_calibration_stage(progress, stage, samples.size()); };
    next("square GEMMs");
    for (const GemmCase& gemm : kGemmCases) {
      if (info.major < gemm.min_major) continue;
      for (const int n : sweep.gemm_sizes) {
        const double flops = 2.0 * n * n * n;
        if (!fits(3.0 * n * n * gemm.element_bytes)) continue;
        add("gemm", "matmul", gemm.dtype, flops,
            dnnsim_cuda_gemm_seconds(kDevice, n, n, n, gemm.code, /*use_cublas=*/true, sweep.repetitions, &error));
      }
    }
    // The shape grids, one per dtype and operand layout (docs/calibration.md, "Operand layouts and
    // backward passes"), all or nothing per grid: a table's grid must be full.
    const double largest = *std::max_element(sweep.grid_dims.begin(), sweep.grid_dims.end());
    const auto count = static_cast<int>(sweep.grid_dims.size());
    std::vector<double> grid_seconds(sweep.grid_dims.size() * sweep.grid_dims.size() * sweep.grid_dims.size());
    for (const GemmCase& gemm : kGemmCases) {
      if (info.major < gemm.min_major || !fits(3.0 * largest * largest * gemm.element_bytes)) continue;
      for (const auto& [op, layout] : {std::pair{GemmOp::nn, DNNSIM_CUDA_NN}, std::pair{GemmOp::nt, DNNSIM_CUDA_NT},
                                       std::pair{GemmOp::tn, DNNSIM_CUDA_TN}}) {
        next(fmt::format("GEMM shape grid {} {}", dtype_name(gemm.dtype), gemm_op_name(op)));
        if (!dnnsim_cuda_gemm_grid_seconds(kDevice, gemm.code, layout, sweep.grid_dims.data(), count,
                                           sweep.repetitions, grid_seconds.data(), &error))
          fail(info, error);
        std::size_t index = 0;
        for (const int m : sweep.grid_dims)
          for (const int n : sweep.grid_dims)
            for (const int k : sweep.grid_dims) {
              add("gemm_shape", "matmul", gemm.dtype, 2.0 * m * n * k, grid_seconds[index++]);
              samples.back().shape = GemmShape{static_cast<std::uint32_t>(m), static_cast<std::uint32_t>(n),
                                               static_cast<std::uint32_t>(k), op};
            }
      }
    }
    next("tiled GEMMs, triad, elementwise, copies");
    for (const int n : sweep.gemm_sizes) {
      if (n > sweep.tiled_max_size || !fits(3.0 * n * n * 4)) continue;
      add("gemm_tiled", "matmul", Dtype::fp32, 2.0 * n * n * n,
          dnnsim_cuda_gemm_seconds(kDevice, n, n, n, DNNSIM_CUDA_FP32, /*use_cublas=*/false, sweep.repetitions,
                                   &error));
    }
    for (const long long n : sweep.elements) {
      const double triad_bytes = static_cast<double>(n) * kDnnsimTriadBytesPerElement;
      if (!fits(triad_bytes)) continue;
      add("stream_triad", "memory", Dtype::fp32, triad_bytes,
          dnnsim_cuda_triad_seconds(kDevice, n, sweep.repetitions, &error));
      add("bias_relu", "elementwise", Dtype::fp32, static_cast<double>(n) * kDnnsimElementwiseFlopsPerElement,
          dnnsim_cuda_elementwise_seconds(kDevice, n, sweep.repetitions, &error));
    }
    for (const CopyCase& copy : kCopyCases) {
      for (const long long bytes : sweep.copy_bytes) {
        if (!fits(static_cast<double>(bytes) * copy.buffers_on_device)) continue;
        add(copy.kernel, copy.kind, Dtype::fp32, static_cast<double>(bytes),
            dnnsim_cuda_memcpy_seconds(kDevice, bytes, copy.code, sweep.repetitions, &error));
      }
    }
    if (dnnsim_cuda_device_count(&error) >= 2 && dnnsim_cuda_peer_access(kDevice, kDevice + 1)) {
      for (const long long bytes : sweep.copy_bytes) {
        if (!fits(static_cast<double>(bytes))) continue;
        add("memcpy_peer", "peer", Dtype::fp32, static_cast<double>(bytes),
            dnnsim_cuda_peer_copy_seconds(kDevice, kDevice + 1, bytes, sweep.repetitions, &error));
      }
    }
    return samples;
  }

  [[nodiscard]] std::string device() const override {
    DnnsimCudaError error{};
    DnnsimCudaDeviceInfo info{};
    if (dnnsim_cuda_device_count(&error) <= kDevice || !dnnsim_cuda_device_info(kDevice, &info, &error)) return "cuda";
    return catalog_name_for_device(info.name);
  }

 private:
  // A measurement failed on a device that was available: a runtime failure, not bad input.
  [[noreturn]] static void fail(const DnnsimCudaDeviceInfo& info, const DnnsimCudaError& error) {
    throw std::runtime_error(fmt::format("CUDA calibration on '{}': {}", info.name, error.message));
  }
};

}  // namespace

std::string catalog_name_for_device(const std::string& cuda_name) {
  const std::vector<std::string> tokens = name_tokens(cuda_name);
  const auto has = [&](std::string_view token) {
    return std::find(tokens.begin(), tokens.end(), token) != tokens.end();
  };
  if (std::any_of(kMobileTokens.begin(), kMobileTokens.end(), has)) return cuda_name;
  for (const DeviceRule& rule : kDeviceRules) {
    if (!has(rule.chip) || (!rule.qualifier.empty() && !has(rule.qualifier))) continue;
    // A rule naming an entry the catalog lacks would be a bug in this table; the raw name is safer.
    if (HardwareCatalog::builtin().find_gpu(rule.catalog) == nullptr) return cuda_name;
    return std::string(rule.catalog);
  }
  return cuda_name;
}

void register_cuda_calibration_backend(CalibrationBackendRegistry& registry) {
  registry.add("cuda",
               "microbenchmarks on CUDA device 0, timed with cudaEvents (best of repetitions): cuBLAS GEMM "
               "(fp32, tf32, fp16, bf16) and a tiled fp32 GEMM, STREAM triad, elementwise bias+ReLU, cudaMemcpy "
               "host<->device (pinned), device<->device and peer",
               "dnnsim; STREAM triad after McCalpin (1995); tiled GEMM after Volkov & Demmel (SC 2008)",
               std::make_shared<const CudaCalibrationBackend>(), cuda_calibration_options());
}

}  // namespace dnnsim
