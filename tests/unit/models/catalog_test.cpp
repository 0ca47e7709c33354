#include "models/hardware/catalog.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <set>
#include <stdexcept>
#include <string>

namespace dnnsim {
namespace {

const HardwareCatalog& catalog() { return HardwareCatalog::builtin(); }

const GpuSpec& gpu(std::string_view name) {
  const GpuSpec* spec = catalog().find_gpu(name);
  if (spec == nullptr) throw std::runtime_error("no GPU " + std::string(name));
  return *spec;
}

TEST(HardwareCatalog, ListsTheRequiredGpus) {
  for (const char* name : {"P100", "V100-16GB", "V100-32GB", "T4", "A10", "L4", "A100-40GB-SXM", "A100-80GB-SXM",
                           "H100-SXM", "H100-PCIe", "H200", "B200", "B300", "GB200", "GB300", "RTX3090", "RTX4090"})
    EXPECT_NE(catalog().find_gpu(name), nullptr) << name;
  EXPECT_EQ(catalog().find_gpu("V100"), nullptr);      // exact names only
  EXPECT_EQ(catalog().find_gpu("h100-sxm"), nullptr);  // case-sensitive
}

TEST(HardwareCatalog, EveryGpuIsComplete) {
  std::set<std::string> names;
  for (const GpuSpec& spec : catalog().gpus()) {
    SCOPED_TRACE(spec.name);
    EXPECT_TRUE(names.insert(spec.name).second) << "duplicate name";
    EXPECT_FALSE(spec.description.empty());
    EXPECT_FALSE(spec.source.empty());
    EXPECT_GT(spec.memory.value(), 0.0);
    EXPECT_GT(spec.memory_bandwidth.value(), 0.0);
    ASSERT_TRUE(spec.peak_fp32.has_value());
    EXPECT_GT(spec.peak_fp32->value(), 0.0);
    // Reduced precision is never slower than fp32 where the GPU has it.
    for (Dtype dtype : {Dtype::tf32, Dtype::fp16, Dtype::bf16, Dtype::fp8, Dtype::mxfp8}) {
      if (auto peak = spec.peak(dtype)) {
        EXPECT_GE(peak->value(), spec.peak_fp32->value()) << dtype_name(dtype);
      }
    }
    // The link names resolve, and an NVLink name goes with a bandwidth and vice versa.
    EXPECT_NE(catalog().find_link(spec.pcie), nullptr) << spec.pcie;
    EXPECT_EQ(spec.nvlink.empty(), spec.nvlink_bandwidth.value() == 0.0);
    if (!spec.nvlink.empty()) {
      const LinkSpec* link = catalog().find_link(spec.nvlink);
      ASSERT_NE(link, nullptr) << spec.nvlink;
      EXPECT_EQ(link->kind, "nvlink");
    }
  }
  EXPECT_EQ(names.size(), catalog().gpu_names().size());
}

// MX formats run on Blackwell's FP8 path (docs/research/llm-hardware.md): its MXFP8 peak is its FP8
// peak; Hopper has none. Data-center Blackwell (compute capability 10.x) runs FP8 GEMMs with a
// transposed operand, which Transformer Engine asks of the device (nvte_is_non_tn_fp8_gemm_supported);
// Hopper (9.0) and Ada (8.9) do not. NVL72 racks join 72 GPUs in one NVLink domain, HGX boards 8.
TEST(HardwareCatalog, BlackwellHasMxFormatsAndNvl72Domains) {
  for (const GpuSpec& spec : catalog().gpus()) {
    const bool blackwell = spec.name == "B200" || spec.name == "B300" || spec.name == "GB200" || spec.name == "GB300";
    EXPECT_EQ(spec.fp8_gemm_any_layout, blackwell) << spec.name;
  }
  for (const char* name : {"B200", "B300", "GB200", "GB300"}) {
    ASSERT_TRUE(gpu(name).peak_mxfp8.has_value()) << name;
    EXPECT_EQ(gpu(name).peak_mxfp8->value(), gpu(name).peak_fp8->value()) << name;
    EXPECT_EQ(gpu(name).nvlink, "NVLink5") << name;
    EXPECT_DOUBLE_EQ(gpu(name).nvlink_bandwidth.value(), 900e9) << name;  // 1.8 TB/s bidirectional
  }
  EXPECT_FALSE(gpu("H100-SXM").peak_mxfp8.has_value());
  EXPECT_TRUE(gpu("H100-SXM").peak_fp8.has_value());
  EXPECT_EQ(gpu("GB200").nvlink_domain, 72);
  EXPECT_EQ(gpu("GB300").nvlink_domain, 72);
  EXPECT_EQ(gpu("B200").nvlink_domain, 8);
  EXPECT_EQ(gpu("B300").nvlink_domain, 8);
  EXPECT_EQ(gpu("H100-SXM").nvlink_domain, 8);
  // Dense BF16: 4.5 PF sparse / 2 for B200 and B300 (Blackwell Ultra's gains are FP4 and memory),
  // 5 / 2 for GB200.
  EXPECT_DOUBLE_EQ(gpu("B200").peak_bf16->value(), 2.25e15);
  EXPECT_DOUBLE_EQ(gpu("B300").peak_bf16->value(), 2.25e15);
  EXPECT_DOUBLE_EQ(gpu("B300").memory.value(), 275040.0 * 1024 * 1024);  // nvidia-smi's totals
  EXPECT_DOUBLE_EQ(gpu("GB300").memory.value(), 284208.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(gpu("GB200").peak_bf16->value(), 2.5e15);
  ASSERT_NE(catalog().find_link("IB-XDR"), nullptr);
  EXPECT_DOUBLE_EQ(catalog().find_link("IB-XDR")->bandwidth.value(), 100e9);  // 800 Gb/s
}

TEST(HardwareCatalog, EveryLinkIsComplete) {
  std::set<std::string> names;
  const std::set<std::string> kinds{"nvlink", "pcie", "ethernet", "infiniband"};
  for (const LinkSpec& link : catalog().links()) {
    SCOPED_TRACE(link.name);
    EXPECT_TRUE(names.insert(link.name).second) << "duplicate name";
    EXPECT_TRUE(kinds.contains(link.kind)) << link.kind;
    EXPECT_FALSE(link.description.empty());
    EXPECT_FALSE(link.source.empty());
    EXPECT_GT(link.bandwidth.value(), 0.0);
    EXPECT_GT(link.latency.value(), 0.0);
  }
  for (const char* name :
       {"NVLink2", "NVLink3", "NVLink4", "NVLink5", "PCIe3", "PCIe4", "PCIe5", "PCIe6", "Ethernet-10G", "Ethernet-25G",
        "Ethernet-100G", "Ethernet-200G", "Ethernet-400G", "IB-EDR", "IB-HDR", "IB-NDR", "IB-XDR"})
    EXPECT_TRUE(names.contains(name)) << name;
  EXPECT_EQ(catalog().find_link("IB-GDR"), nullptr);  // not in the catalog
}

TEST(HardwareCatalog, NamesAreInCatalogOrder) {
  const std::vector<std::string> names = catalog().gpu_names();
  ASSERT_EQ(names.size(), catalog().gpus().size());
  for (std::size_t i = 0; i < names.size(); ++i) EXPECT_EQ(names[i], catalog().gpus()[i].name);
  const std::vector<std::string> links = catalog().link_names();
  ASSERT_EQ(links.size(), catalog().links().size());
  for (std::size_t i = 0; i < links.size(); ++i) EXPECT_EQ(links[i], catalog().links()[i].name);
}

TEST(HardwareCatalog, PeakIsNulloptForUnsupportedDtypes) {
  // Volta has fp16 tensor cores only: no bf16, tf32 or fp8 (V100 datasheet).
  const GpuSpec& v100 = gpu("V100-32GB");
  EXPECT_FALSE(v100.peak(Dtype::bf16).has_value());
  EXPECT_FALSE(v100.peak(Dtype::tf32).has_value());
  EXPECT_FALSE(v100.peak(Dtype::fp8).has_value());
  EXPECT_DOUBLE_EQ(v100.peak(Dtype::fp32)->value(), 15.7e12);  // V100 SXM2 datasheet: FP32 15.7 TFLOPS
  EXPECT_DOUBLE_EQ(v100.peak(Dtype::fp16)->value(), 125e12);   // "Tensor Performance 125 TFLOPS"
  EXPECT_FALSE(gpu("P100").peak(Dtype::bf16).has_value());
  EXPECT_FALSE(gpu("T4").peak(Dtype::tf32).has_value());
  // fp8 came with Ada and Hopper: not on A100, present on L4, RTX 4090, H100.
  EXPECT_FALSE(gpu("A100-80GB-SXM").peak(Dtype::fp8).has_value());
  EXPECT_TRUE(gpu("L4").peak(Dtype::fp8).has_value());
  EXPECT_TRUE(gpu("H100-SXM").peak(Dtype::fp8).has_value());
}

TEST(HardwareCatalog, PeakSelectsTheFieldOfEachDtype) {
  const GpuSpec& h100 = gpu("H100-SXM");
  EXPECT_EQ(h100.peak(Dtype::fp32), h100.peak_fp32);
  EXPECT_EQ(h100.peak(Dtype::tf32), h100.peak_tf32);
  EXPECT_EQ(h100.peak(Dtype::fp16), h100.peak_fp16);
  EXPECT_EQ(h100.peak(Dtype::bf16), h100.peak_bf16);
  EXPECT_EQ(h100.peak(Dtype::fp8), h100.peak_fp8);
}

TEST(HardwareCatalog, SpotChecksAgainstDatasheets) {
  // A100 datasheet (2021), A100 80GB SXM: 80 GB HBM2e at 2,039 GB/s; BF16 312 TFLOPS dense
  // (624 with sparsity); NVLink 600 GB/s bidirectional = 300 GB/s per direction.
  const GpuSpec& a100 = gpu("A100-80GB-SXM");
  EXPECT_DOUBLE_EQ(a100.memory.value(), 80.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(a100.memory_bandwidth.value(), 2039e9);
  EXPECT_DOUBLE_EQ(a100.peak_bf16->value(), 312e12);
  EXPECT_DOUBLE_EQ(a100.nvlink_bandwidth.value(), 300e9);
  EXPECT_EQ(a100.nvlink, "NVLink3");

  // V100 datasheet: NVLink 300 GB/s bidirectional = 6 links x 25 GB/s per direction = 150 GB/s.
  const GpuSpec& v100 = gpu("V100-16GB");
  EXPECT_DOUBLE_EQ(v100.nvlink_bandwidth.value(), 150e9);
  const LinkSpec& nvlink2 = *catalog().find_link(v100.nvlink);
  EXPECT_DOUBLE_EQ(v100.nvlink_bandwidth / nvlink2.bandwidth, 6.0);

  // H100 datasheet prints FP16 1,979 TFLOPS with sparsity: dense is half; 3.35 TB/s; NVLink 900 GB/s
  // bidirectional = 18 links x 25 GB/s per direction.
  const GpuSpec& h100 = gpu("H100-SXM");
  EXPECT_DOUBLE_EQ(h100.peak_fp16->value(), 989.5e12);
  EXPECT_DOUBLE_EQ(h100.memory_bandwidth.value(), 3.35e12);
  EXPECT_DOUBLE_EQ(h100.nvlink_bandwidth / catalog().find_link("NVLink4")->bandwidth, 18.0);

  // Ada whitepaper, RTX 4090: FP16 tensor with FP32 accumulate 165.2 TFLOPS, FP8 (FP32 acc.) 330.3;
  // GA102 whitepaper, RTX 3090: FP16 tensor with FP32 accumulate 71 TFLOPS.
  EXPECT_DOUBLE_EQ(gpu("RTX4090").peak_fp16->value(), 165.2e12);
  EXPECT_DOUBLE_EQ(gpu("RTX4090").peak_fp8->value(), 330.3e12);
  EXPECT_DOUBLE_EQ(gpu("RTX3090").peak_fp16->value(), 71e12);
  EXPECT_TRUE(gpu("RTX4090").nvlink.empty());  // Ada GeForce has no NVLink
}

TEST(HardwareCatalog, LinkBandwidthsArePerDirection) {
  // PCIe 4.0 x16: 16 GT/s x 16 lanes x 128/130 / 8 bit = 31.508 GB/s per direction.
  EXPECT_NEAR(catalog().find_link("PCIe4")->bandwidth.value(), 16e9 * 16 * 128 / 130 / 8, 1e6);
  // Line rates in bits: 400 Gbit/s = 50 GB/s; HDR 200 Gbit/s = 25 GB/s.
  EXPECT_DOUBLE_EQ(catalog().find_link("Ethernet-400G")->bandwidth.value(), 50e9);
  EXPECT_DOUBLE_EQ(catalog().find_link("IB-HDR")->bandwidth.value(), 25e9);
  // NVLink 2.0: 25 GB/s per direction per link (Volta whitepaper).
  EXPECT_DOUBLE_EQ(catalog().find_link("NVLink2")->bandwidth.value(), 25e9);
}

TEST(HardwareCatalog, TablesListEveryEntry) {
  const std::string gpus = format_gpu_table(catalog());
  for (const std::string& name : catalog().gpu_names()) EXPECT_NE(gpus.find(name), std::string::npos) << name;
  EXPECT_NE(gpus.find("80 GiB"), std::string::npos) << gpus;
  EXPECT_NE(gpus.find("NVLink2 150 GB/s"), std::string::npos) << gpus;
  EXPECT_NE(gpus.find("312 TFlops"), std::string::npos) << gpus;
  const std::string links = format_link_table(catalog());
  for (const std::string& name : catalog().link_names()) EXPECT_NE(links.find(name), std::string::npos) << name;
  EXPECT_NE(links.find("25 GB/s"), std::string::npos) << links;
  // One header line, one column-title line, one row per entry.
  EXPECT_EQ(std::count(gpus.begin(), gpus.end(), '\n'), static_cast<std::ptrdiff_t>(catalog().gpus().size() + 2));
  EXPECT_EQ(std::count(links.begin(), links.end(), '\n'), static_cast<std::ptrdiff_t>(catalog().links().size() + 2));
}

TEST(HardwareCatalog, RejectsDuplicateNames) {
  GpuSpec a;
  a.name = "X";
  EXPECT_THROW(HardwareCatalog({a, a}, {}), std::invalid_argument);
  LinkSpec l;
  l.name = "L";
  EXPECT_THROW(HardwareCatalog({}, {l, l}), std::invalid_argument);
  const HardwareCatalog custom({a}, {l});
  EXPECT_NE(custom.find_gpu("X"), nullptr);
  EXPECT_EQ(custom.find_gpu("A100-80GB-SXM"), nullptr);
}

}  // namespace
}  // namespace dnnsim
