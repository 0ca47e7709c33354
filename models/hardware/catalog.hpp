// The hardware catalog: datasheet figures of GPUs and of the links between them, by name, so that a
// scenario can say `gpu: A100-80GB-SXM` or `link: IB-HDR` and override single fields.
//
// Conventions (docs/hardware.md lists every entry with its source):
// - Peak rates are dense (no 2:4 structured sparsity), on tensor cores where the GPU has them, as
//   the vendor datasheet or architecture whitepaper quotes them. Datasheets that print only the
//   sparse figure ("* with sparsity") are halved, as their footnotes say. Consumer GeForce cards run
//   fp16/bf16 tensor ops with fp32 accumulate at half the fp16-accumulate rate; the catalog uses the
//   fp32-accumulate row (what mixed-precision training uses) of the GA102 and Ada whitepapers.
//   A dtype the GPU cannot run natively is nullopt (bf16/tf32 before Ampere, fp8 before Ada/Hopper);
//   models/cost falls back to fp32 for it.
// - Bandwidths are PER DIRECTION in bytes per second (decimal GB/s). Datasheets quote NVLink as the
//   bidirectional sum ("300 GB/s" for V100 = 6 links x 25 GB/s x 2 directions), so the catalog holds
//   half of the datasheet figure. PCIe is x16 after 128b/130b line encoding, before packet overhead.
// - DRAM capacities are binary: a "32 GB" HBM2 part holds 32 GiB (4 stacks of 8 GiB). Blackwell's
//   HBM3e figures (180, 186, 288 GB) are NVIDIA's usable capacities in decimal GB, kept as printed.
// - Link latency is the one-way latency of one hop of that kind, as a simulator link parameter; each
//   entry states where its value comes from (several are stated assumptions, not measurements).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/common/units.hpp"
#include "models/program/task_graph.hpp"

namespace dnnsim {

struct GpuSpec {
  std::string name;         // catalog key, e.g. "V100-32GB", "A100-80GB-SXM", "H100-SXM"
  std::string description;  // e.g. "NVIDIA Tesla V100 SXM2 32 GB"
  // Dense peak throughput per dtype (see the conventions above); nullopt when the GPU has no such mode.
  std::optional<FlopsPerSecond> peak_fp32, peak_tf32, peak_fp16, peak_bf16, peak_fp8;
  Bytes memory;                     // HBM/GDDR capacity
  BytesPerSecond memory_bandwidth;  // peak DRAM bandwidth
  std::string nvlink;               // link catalog name ("NVLink1" … "NVLink4"), empty without NVLink
  // Total NVLink bandwidth of one GPU PER DIRECTION, all its links together: half the datasheet's
  // bidirectional figure (V100: 6 links x 25 GB/s = 150 GB/s per direction; datasheet 300 GB/s).
  BytesPerSecond nvlink_bandwidth;
  std::string pcie;    // host link catalog name: "PCIe3", "PCIe4", "PCIe5"
  std::string source;  // datasheet citation: document title, year, URL
  // NVLink only through a bridge between a PAIR of cards (RTX 3090, H100 PCIe), not across a board:
  // such nodes default to a PCIe fabric.
  bool nvlink_bridge_only = false;
  // MXFP8 (OCP microscaling: FP8 elements with an 8-bit scale per 32; Blackwell's tensor cores run
  // it on their FP8 path, so the datasheet's FP8 figure is its peak); nullopt: no MX formats (Hopper
  // and older), where an MXFP8 recipe is refused.
  std::optional<FlopsPerSecond> peak_mxfp8;
  // The most GPUs one NVLink switch fabric joins in the system this GPU ships in (8 for an HGX/DGX
  // baseboard, 72 for a GB200/GB300 NVL72 rack); 0 where the catalog does not say. A node type's
  // `nvlink_domain` may not exceed it.
  int nvlink_domain = 0;
  // The link between the GPU and its host's memory when it is not `pcie` (a link catalog name:
  // "NVLink-C2C" on a Grace superchip); empty: the PCIe link.
  std::string host_link;
  // Its FP8 GEMMs take either operand transposed (cuBLASLt's NN and NT layouts, not only TN), so a
  // tensor scaled per tensor needs no FP8 transpose for its backward GEMMs. Transformer Engine asks
  // the same of the device (NVIDIA/TransformerEngine transformer_engine/common/transformer_engine.cpp,
  // nvte_is_non_tn_fp8_gemm_supported: compute capability 10.x and from 13.0 on, i.e. B200, B300,
  // GB200, GB300; not Hopper, Ada or consumer Blackwell 12.x).
  bool fp8_gemm_any_layout = false;

  // The peak rate for `dtype`, nullopt when the GPU has no such mode.
  [[nodiscard]] std::optional<FlopsPerSecond> peak(Dtype dtype) const;
};

struct LinkSpec {
  std::string name;  // "NVLink2", "PCIe4", "Ethernet-100G", "IB-HDR", …
  std::string kind;  // "nvlink", "pcie", "ethernet", "infiniband"
  std::string description;
  // Usable bandwidth per direction: one NVLink link (brick); PCIe x16 after encoding; Ethernet and
  // InfiniBand at line (data) rate.
  BytesPerSecond bandwidth;
  Seconds latency;  // typical one-way latency of one hop; the entry's source says where it comes from
  std::string source;
};

// An immutable set of named GPUs and links, in a fixed order (listings are deterministic).
class HardwareCatalog {
 public:
  // @throw std::invalid_argument when two GPUs or two links share a name.
  HardwareCatalog(std::vector<GpuSpec> gpus, std::vector<LinkSpec> links);

  // The datasheet entries shipped with dnnsim (models/hardware/catalog.cpp).
  static const HardwareCatalog& builtin();

  // nullptr when there is no entry of that (exact, case-sensitive) name.
  [[nodiscard]] const GpuSpec* find_gpu(std::string_view name) const;
  [[nodiscard]] const LinkSpec* find_link(std::string_view name) const;

  [[nodiscard]] const std::vector<GpuSpec>& gpus() const { return gpus_; }
  [[nodiscard]] const std::vector<LinkSpec>& links() const { return links_; }
  [[nodiscard]] std::vector<std::string> gpu_names() const;
  [[nodiscard]] std::vector<std::string> link_names() const;

 private:
  std::vector<GpuSpec> gpus_;
  std::vector<LinkSpec> links_;
};

// Fixed-width text tables for `dnnsim list gpus` / `dnnsim list links`: a header, then one row per
// entry in catalog order with the key figures and their units ("-" for a missing mode or link).
[[nodiscard]] std::string format_gpu_table(const HardwareCatalog& catalog);
[[nodiscard]] std::string format_link_table(const HardwareCatalog& catalog);

}  // namespace dnnsim
