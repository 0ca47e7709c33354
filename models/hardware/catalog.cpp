#include "models/hardware/catalog.hpp"

#include <fmt/format.h>

#include <array>
#include <set>
#include <stdexcept>

namespace dnnsim {
namespace {

// The tables are written with the same unit strings a scenario uses ("125TFlops", "900GB/s",
// "32GiB"), read by the one unit parser, so a figure reads as it does in the datasheet and no unit
// conversion is written by hand. An empty string is a mode the GPU does not have.
struct GpuRow {
  std::string_view name, description;
  std::string_view fp32, tf32, fp16, bf16, fp8;
  std::string_view memory, memory_bandwidth, nvlink, nvlink_per_direction, pcie;
  std::string_view source;
  bool nvlink_bridge_only = false;
  std::string_view mxfp8 = "";  // MX formats: the FP8 peak where the tensor cores run MXFP8
  int nvlink_domain = 0;        // GPUs of the largest NVLink switch fabric the system ships with
  std::string_view host_link = "";  // the GPU↔host-memory link when not the PCIe link (GpuSpec::host_link)
  bool fp8_any_layout = false;      // GpuSpec::fp8_gemm_any_layout (data-center Blackwell)
};

struct LinkRow {
  std::string_view name, kind, description, bandwidth_per_direction, latency;
  std::string_view bandwidth_source, latency_source;
};

// Datasheet URLs, shared by the entries that cite the same document.
constexpr std::string_view kP100 =
    "NVIDIA Tesla P100 datasheet (2016), SXM2 (NVLink) column; "
    "https://images.nvidia.com/content/tesla/pdf/nvidia-tesla-p100-datasheet.pdf";
constexpr std::string_view kV100 =
    "NVIDIA V100 Tensor Core GPU datasheet (2020), V100 SXM2 column; "
    "https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf";
constexpr std::string_view kA100 =
    "NVIDIA A100 Tensor Core GPU datasheet (2021), A100 SXM columns; "
    "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
    "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf";
constexpr std::string_view kH100 =
    "NVIDIA H100 Tensor Core GPU datasheet (2023), sparse figures halved; "
    "https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet";
// Blackwell: docs/research/llm-hardware.md names every figure's source and rank.
constexpr std::string_view kBlackwell =
    "NVIDIA GB200 NVL72 / HGX B200 specification table (nvidia.com/en-us/data-center/gb200-nvl72, as quoted "
    "by secondary pages), sparse figures halved; DGX B200 and DGX GB200 user guides (docs.nvidia.com) for "
    "memory, NVLink 5 and the NVL72 domain; docs/research/llm-hardware.md";

// Columns: name, description;
//          fp32, tf32, fp16, bf16, fp8 (dense peaks, "" = no such mode);
//          memory, memory bandwidth, NVLink generation, NVLink total PER DIRECTION (= datasheet
//          bidirectional figure / 2), PCIe generation; source.
// Ordered by architecture generation, then by size.
// clang-format off
const std::array kGpus{
    // Edge devices (ADSP's setting, AAAI'20: heterogeneous edge systems). Jetson Nano module: 128-core
    // Maxwell GPU at 921.6 MHz = 128 x 2 x 0.9216 GHz = 236 GFLOPS fp32, "472 GFLOPS" fp16 (half2) as
    // the datasheet prints; 4 GB 64-bit LPDDR4 at 25.6 GB/s; no NVLink; the module's PCIe is Gen2 x4,
    // modelled as the catalog's PCIe3 because it never carries training traffic here.
    GpuRow{"Jetson-Nano", "NVIDIA Jetson Nano module 4 GB (Maxwell, edge)",
           "236GFlops", "", "472GFlops", "", "",
           "4GiB", "25.6GB/s", "", "0B/s", "PCIe3",
           "NVIDIA Jetson Nano System-on-Module datasheet DA-09366-001 (2019), 472 GFLOPS fp16, 25.6 GB/s; "
           "https://developer.nvidia.com/embedded/jetson-nano"},
    // Jetson TX2: 256-core Pascal GPU at 1.30 GHz = 256 x 2 x 1.30 GHz = 665.6 GFLOPS fp32, twice in
    // fp16 ("1.3 TFLOPS"); 8 GB 128-bit LPDDR4 at 59.7 GB/s.
    GpuRow{"Jetson-TX2", "NVIDIA Jetson TX2 module 8 GB (Pascal, edge)",
           "665.6GFlops", "", "1.33TFlops", "", "",
           "8GiB", "59.7GB/s", "", "0B/s", "PCIe3",
           "NVIDIA Jetson TX2 Series module datasheet DS-08532 (2019): 256 CUDA cores at 1.30 GHz, 59.7 GB/s; "
           "https://developer.nvidia.com/embedded/jetson-tx2"},
    // P100 SXM2: FP32 10.6, FP16 21.2 TFLOPS (no tensor cores: packed half2 at twice fp32), 16 GB HBM2,
    // 732 GB/s, NVLink 160 GB/s bidirectional = 4 links x 20 GB/s per direction.
    GpuRow{"P100", "NVIDIA Tesla P100 SXM2 16 GB (Pascal)",
           "10.6TFlops", "", "21.2TFlops", "", "",
           "16GiB", "732GB/s", "NVLink1", "80GB/s", "PCIe3", kP100},
    // V100 SXM2: FP32 15.7, Tensor Performance 125 TFLOPS (fp16 in, fp32 accumulate), 900 GB/s,
    // NVLink 300 GB/s bidirectional = 6 links x 25 GB/s per direction.
    GpuRow{"V100-16GB", "NVIDIA Tesla V100 SXM2 16 GB (Volta)",
           "15.7TFlops", "", "125TFlops", "", "",
           "16GiB", "900GB/s", "NVLink2", "150GB/s", "PCIe3", kV100},
    GpuRow{"V100-32GB", "NVIDIA Tesla V100 SXM2 32 GB (Volta)",
           "15.7TFlops", "", "125TFlops", "", "",
           "32GiB", "900GB/s", "NVLink2", "150GB/s", "PCIe3", kV100},
    // T4: single precision 8.1, mixed precision (FP16/FP32) 65 TFLOPS, 16 GB GDDR6 at 320 GB/s (the
    // datasheet prints "320+ GB/s"; the product brief "up to 320 GB/s").
    GpuRow{"T4", "NVIDIA T4 16 GB PCIe (Turing)",
           "8.1TFlops", "", "65TFlops", "", "",
           "16GiB", "320GB/s", "", "0B/s", "PCIe3",
           "NVIDIA T4 Tensor Core GPU datasheet (2019); "
           "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-t4/"
           "t4-tensor-core-datasheet-951643.pdf"},
    // A10: FP32 31.2, TF32 62.5, BF16 125, FP16 125 TFLOPS (dense | sparse printed), 24 GB GDDR6, 600 GB/s.
    GpuRow{"A10", "NVIDIA A10 24 GB PCIe (Ampere GA102)",
           "31.2TFlops", "62.5TFlops", "125TFlops", "125TFlops", "",
           "24GiB", "600GB/s", "", "0B/s", "PCIe4",
           "NVIDIA A10 Tensor Core GPU datasheet (2021); "
           "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a10/pdf/a10-datasheet.pdf"},
    // A100 SXM: FP32 19.5, TF32 156, BF16 312, FP16 312 TFLOPS; 40 GB HBM2 at 1,555 GB/s, 80 GB HBM2e at
    // 2,039 GB/s; NVLink 600 GB/s bidirectional = 12 links x 25 GB/s per direction.
    GpuRow{"A100-40GB-SXM", "NVIDIA A100 SXM4 40 GB (Ampere)",
           "19.5TFlops", "156TFlops", "312TFlops", "312TFlops", "",
           "40GiB", "1555GB/s", "NVLink3", "300GB/s", "PCIe4", kA100},
    GpuRow{"A100-80GB-SXM", "NVIDIA A100 SXM4 80 GB (Ampere)",
           "19.5TFlops", "156TFlops", "312TFlops", "312TFlops", "",
           "80GiB", "2039GB/s", "NVLink3", "300GB/s", "PCIe4", kA100},
    // RTX 3090 (GA102 whitepaper, Appendix A): FP32 35.6, TF32 tensor 35.6, FP16 tensor with FP32
    // accumulate 71 (142 with FP16 accumulate), BF16 71 TFLOPS; 24 GB GDDR6X at 936 GB/s; NVLink bridge
    // 112.5 GB/s bidirectional = 4 x4 links x 14.0625 GB/s per direction, between a PAIR of cards only.
    GpuRow{"RTX3090", "NVIDIA GeForce RTX 3090 24 GB (Ampere GA102)",
           "35.6TFlops", "35.6TFlops", "71TFlops", "71TFlops", "",
           "24GiB", "936GB/s", "NVLink3", "56.25GB/s", "PCIe4",
           "NVIDIA Ampere GA102 GPU Architecture whitepaper V2.0 (2021), Appendix A (GeForce RTX 3090), "
           "FP32-accumulate rows; "
           "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf",
           /*nvlink_bridge_only=*/true},
    // L4: FP32 30.3 TFLOPS; TF32 120, FP16 242, BF16 242, FP8 485 TFLOPS printed WITH sparsity, halved
    // here; 24 GB GDDR6 at 300 GB/s.
    GpuRow{"L4", "NVIDIA L4 24 GB PCIe (Ada Lovelace)",
           "30.3TFlops", "60TFlops", "121TFlops", "121TFlops", "242.5TFlops",
           "24GiB", "300GB/s", "", "0B/s", "PCIe4",
           "NVIDIA L4 Tensor Core GPU datasheet (2023), sparse figures halved; "
           "https://resources.nvidia.com/en-us-data-center-overview/l4-gpu-datasheet"},
    // RTX 4090 (Ada whitepaper, Appendix A): FP32 82.6, TF32 82.6, FP16 tensor with FP32 accumulate
    // 165.2 (330.3 with FP16 accumulate), BF16 165.2, FP8 with FP32 accumulate 330.3 TFLOPS;
    // 24 GB GDDR6X at 1,008 GB/s; no NVLink.
    GpuRow{"RTX4090", "NVIDIA GeForce RTX 4090 24 GB (Ada Lovelace)",
           "82.6TFlops", "82.6TFlops", "165.2TFlops", "165.2TFlops", "330.3TFlops",
           "24GiB", "1008GB/s", "", "0B/s", "PCIe4",
           "NVIDIA Ada GPU Architecture whitepaper (2023), Appendix A (GeForce RTX 4090), "
           "FP32-accumulate rows; "
           "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf"},
    // H100 PCIe: FP32 51; TF32 756, BF16 1,513, FP16 1,513, FP8 3,026 TFLOPS printed with sparsity;
    // 80 GB HBM2e at 2 TB/s; NVLink bridge 600 GB/s bidirectional, between a PAIR of cards only.
    GpuRow{"H100-PCIe", "NVIDIA H100 PCIe 80 GB (Hopper)",
           "51TFlops", "378TFlops", "756.5TFlops", "756.5TFlops", "1513TFlops",
           "80GiB", "2000GB/s", "NVLink4", "300GB/s", "PCIe5", kH100, /*nvlink_bridge_only=*/true},
    // H100 SXM: FP32 67; TF32 989, BF16 1,979, FP16 1,979, FP8 3,958 TFLOPS printed with sparsity;
    // 80 GB HBM3 at 3.35 TB/s; NVLink 900 GB/s bidirectional = 18 links x 25 GB/s per direction.
    GpuRow{"H100-SXM", "NVIDIA H100 SXM5 80 GB (Hopper)",
           "67TFlops", "494.5TFlops", "989.5TFlops", "989.5TFlops", "1979TFlops",
           "80GiB", "3350GB/s", "NVLink4", "450GB/s", "PCIe5", kH100, false, "", 8},
    // H200 SXM: same compute as H100 SXM; 141 GB HBM3e at 4.8 TB/s; NVLink 900 GB/s bidirectional.
    GpuRow{"H200", "NVIDIA H200 SXM 141 GB (Hopper)",
           "67TFlops", "494.5TFlops", "989.5TFlops", "989.5TFlops", "1979TFlops",
           "141GiB", "4800GB/s", "NVLink4", "450GB/s", "PCIe5",
           "NVIDIA H200 Tensor Core GPU datasheet (2024), H200 SXM column, sparse figures halved; "
           "https://www.nvidia.com/en-us/data-center/h200/",
           false, "", 8},
    // B200 (HGX/DGX B200, 1,000 W): FP32 75; TF32 2.2, BF16/FP16 4.5, FP8/FP6 9 PFLOPS printed with
    // sparsity; "180 GB" HBM3e (DGX B200: 1,440 GB for 8) at 7.7 TB/s; NVLink 5, 1.8 TB/s bidirectional
    // = 18 links x 50 GB/s per direction; MXFP8 on the FP8 path. 8 GPUs per NVLink domain.
    // Memory: what the driver gives a process, nvidia-smi's total of 183,359 MiB (179.1 GiB; NVIDIA/
    // TensorRT-LLM issue #10278, a DGX B200): NVIDIA's "GB" of HBM are GiB rounded (H100 "80 GB" is
    // 81,559 MiB = 79.6 GiB, modal-labs/modal-client PR #2797), not 10^9 bytes (180e9 B = 167.6 GiB).
    GpuRow{"B200", "NVIDIA B200 SXM 180 GB (Blackwell, HGX/DGX B200)",
           "75TFlops", "1.1PFlops", "2.25PFlops", "2.25PFlops", "4.5PFlops",
           "183359MiB", "7.7TB/s", "NVLink5", "900GB/s", "PCIe6", kBlackwell, false, "4.5PFlops", 8, "", true},
    // B300 (Blackwell Ultra on an HGX/DGX B300 baseboard): FP32 75; TF32 1.125, BF16/FP16 2.25, FP8 4.5
    // PFLOPS dense, B200's (DGX B300's 72 PF FP8 training for 8 GPUs is B200's, sparse); its gains are
    // dense FP4 and memory: "288 GB" HBM3e at 8 TB/s; NVLink 5 as B200, 8 GPUs per NVLink domain. Memory:
    // nvidia-smi's total, 275,040 MiB (268.6 GiB; "NVIDIA B300 SXM6 AC, 275040 MiB" in several public
    // nvidia-smi listings found by text search, docs/research/llm-hardware.md).
    GpuRow{"B300", "NVIDIA B300 SXM 288 GB (Blackwell Ultra, HGX/DGX B300)",
           "75TFlops", "1.125PFlops", "2.25PFlops", "2.25PFlops", "4.5PFlops",
           "275040MiB", "8TB/s", "NVLink5", "900GB/s", "PCIe6",
           "G. Lockwood, processors/B300 (HGX B300 dense rates, 288 GB HBM3e, 8 TB/s; "
           "https://glennklockwood.com/garden/processors/B300); NVIDIA DGX B300 (72 PF FP8 training, 2.3 TB "
           "HBM3e for 8 GPUs, NVLink 14.4 TB/s); docs/research/llm-hardware.md",
           false, "4.5PFlops", 8, "", true},
    // GB200 (the Blackwell GPU of a GB200 superchip, 1,200 W): FP32 80; TF32 2.5, BF16/FP16 5, FP8 10
    // PFLOPS printed with sparsity; "186 GB" HBM3e at 8 TB/s; NVLink 5 as B200, into the rack's NVLink
    // switch trays: 72 GPUs per NVLink domain (NVL72). Memory: nvidia-smi's total on GB200 NVL72 trays,
    // 189,471 MiB (185.0 GiB; public nvidia-smi listings, docs/research/llm-hardware.md), the same
    // GiB-rounded convention as B200 and H100 (186e9 B would be 173.2 GiB).
    GpuRow{"GB200", "NVIDIA GB200 (Blackwell GPU of a GB200 NVL72 rack)",
           "80TFlops", "1.25PFlops", "2.5PFlops", "2.5PFlops", "5PFlops",
           "189471MiB", "8TB/s", "NVLink5", "900GB/s", "PCIe6", kBlackwell, false, "5PFlops", 72, "NVLink-C2C", true},
    // GB300 (Blackwell Ultra, 1,400 W): BF16 2.5 and FP8 5 PFLOPS dense (rack 180 / 360 PF dense, a
    // secondary source; NVIDIA's Blackwell Ultra blog gives the 15 PF dense NVFP4, the 288 GB HBM3e
    // and 8 TB/s); FP32 and TF32 not found, taken as GB200's (assumption); NVLink 5, NVL72. Memory:
    // nvidia-smi's total on GB300 NVL72 trays, 284,208 MiB (277.5 GiB; "NVIDIA GB300, 284208 MiB" in public
    // nvidia-smi listings found by text search, docs/research/llm-hardware.md; the DGX Station's GB300
    // shows 256,703 MiB, another part).
    GpuRow{"GB300", "NVIDIA GB300 (Blackwell Ultra GPU of a GB300 NVL72 rack)",
           "80TFlops", "1.25PFlops", "2.5PFlops", "2.5PFlops", "5PFlops",
           "284208MiB", "8TB/s", "NVLink5", "900GB/s", "PCIe6",
           "NVIDIA technical blog, Inside NVIDIA Blackwell Ultra (2025): 288 GB HBM3E, 8 TB/s, NVLink 5 "
           "1.8 TB/s; verda.com GB300 NVL72 architecture (dense BF16/FP8); FP32/TF32 assumed as GB200; "
           "docs/research/llm-hardware.md",
           false, "5PFlops", 72, "NVLink-C2C", true},
};
// clang-format on

// Link latencies are simulator parameters for one hop, not measurements of a particular system:
// NVLink and PCIe take the order of NCCL's per-hop hardware latency for its low-latency protocol
// (nccl src/graph/tuning.cc, `hwLat`: about 0.5-0.6 us for NVLink and 1 us for PCIe across 2.x
// releases); InfiniBand the ~1 us small-message one-way latency of RDMA through one switch (adapters
// quote < 0.6 us, a switch hop ~0.1 us); Ethernet 10/25G assumes kernel TCP sockets (~10 us one way),
// 100G and faster assume RoCEv2 RDMA (~2 us).
constexpr std::string_view kHopLatency = "latency: order of NCCL's per-hop hwLat (assumption)";
const std::array kLinks{
    // NVLink: bandwidth of ONE link per direction; a GPU's total is GpuSpec::nvlink_bandwidth.
    LinkRow{"NVLink1", "nvlink", "NVLink 1.0 (Pascal), one link; P100 has 4", "20GB/s", "0.6us",
            "NVIDIA Tesla P100 whitepaper (2016), NVLink: 4 links, 160 GB/s bidirectional; "
            "https://images.nvidia.com/content/pdf/tesla/whitepaper/pascal-architecture-whitepaper.pdf",
            kHopLatency},
    LinkRow{"NVLink2", "nvlink", "NVLink 2.0 (Volta), one link; V100 has 6", "25GB/s", "0.6us",
            "NVIDIA Tesla V100 GPU Architecture whitepaper (2017), NVLink: 25 GB/s per direction per link; "
            "https://images.nvidia.com/content/volta-architecture/pdf/volta-architecture-whitepaper.pdf",
            kHopLatency},
    LinkRow{"NVLink3", "nvlink", "NVLink 3.0 (Ampere), one link of 4 x 50 Gbit/s pairs; A100 has 12", "25GB/s", "0.6us",
            "NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020), third-generation NVLink: 25 GB/s per "
            "direction per link; https://images.nvidia.com/aem-dam/en-zz/Solutions/data-center/"
            "nvidia-ampere-architecture-whitepaper.pdf",
            kHopLatency},
    LinkRow{"NVLink4", "nvlink", "NVLink 4.0 (Hopper), one link of 2 x 100 Gbit/s pairs; H100 has 18", "25GB/s",
            "0.6us",
            "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022), fourth-generation NVLink: 18 links, "
            "900 GB/s total; https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper",
            kHopLatency},
    LinkRow{"NVLink5", "nvlink", "NVLink 5.0 (Blackwell), one link; B200/B300/GB200/GB300 have 18 (NVSwitch 5th gen)",
            "50GB/s", "0.6us",
            "NVIDIA DGX B200 user guide: 5th-generation NVLink, 1.8 TB/s per GPU (14.4 TB/s for 8), 18 links; "
            "docs/research/llm-hardware.md",
            kHopLatency},
    // NVLink-C2C: a Grace CPU's chip-to-chip link to its GPU, 900 GB/s bidirectional = 450 GB/s per
    // direction (Grace Hopper: 10 links x 9 signals x 40 Gbit/s per direction). A GB200 superchip
    // joins one Grace and two Blackwell GPUs by it; taken here as each GPU's own link at that rate
    // (NVIDIA's pages give the 900 GB/s for the superchip without saying whether its two GPUs share it).
    LinkRow{"NVLink-C2C", "nvlink", "NVLink-C2C, a Grace CPU's link to its GPU (GH200, GB200, GB300)", "450GB/s",
            "0.6us",
            "NVIDIA technical blog, NVIDIA GB200 NVL72 Delivers Trillion-Parameter LLM Training and Real-Time "
            "Inference (2024): \"NVLink-Chip-to-Chip (C2C) interface that delivers 900 GB/s of bidirectional "
            "bandwidth\"; https://developer.nvidia.com/blog/"
            "nvidia-gb200-nvl72-delivers-trillion-parameter-llm-training-and-real-time-inference/",
            kHopLatency},
    // x16 after 128b/130b encoding: 8 GT/s x 16 lanes x 128/130 / 8 bit = 15.754 GB/s; Gen4 and Gen5
    // double it each time.
    LinkRow{"PCIe3", "pcie", "PCI Express 3.0 x16, 8 GT/s per lane", "15.754GB/s", "1us",
            "PCI-SIG PCI Express Base Specification 3.0 (2010): 8 GT/s, 128b/130b", kHopLatency},
    LinkRow{"PCIe4", "pcie", "PCI Express 4.0 x16, 16 GT/s per lane", "31.508GB/s", "1us",
            "PCI-SIG PCI Express Base Specification 4.0 (2017): 16 GT/s, 128b/130b", kHopLatency},
    LinkRow{"PCIe5", "pcie", "PCI Express 5.0 x16, 32 GT/s per lane", "63.015GB/s", "1us",
            "PCI-SIG PCI Express Base Specification 5.0 (2019): 32 GT/s, 128b/130b", kHopLatency},
    // Gen6 signals PAM4 at 64 GT/s in 256-byte FLITs of which 242 carry data (the rest CRC and FEC):
    // 64 GT/s x 16 lanes / 8 bit x 242/256 = 121 GB/s.
    LinkRow{"PCIe6", "pcie", "PCI Express 6.0 x16, 64 GT/s per lane (FLIT mode)", "121GB/s", "1us",
            "PCI-SIG PCI Express Base Specification 6.0 (2022): 64 GT/s PAM4, 242 of 256 FLIT bytes data", kHopLatency},
    // Ethernet and InfiniBand: line (data) rate per direction.
    LinkRow{"Ethernet-1G", "ethernet", "Gigabit Ethernet, TCP sockets (edge devices, campus LANs)", "1Gbps", "50us",
            "IEEE 802.3ab (1999) line rate", "latency: kernel TCP one way through one switch (assumption)"},
    LinkRow{"Ethernet-10G", "ethernet", "10 Gigabit Ethernet, TCP sockets", "10Gbps", "10us",
            "IEEE 802.3ae (2002) line rate", "latency: kernel TCP one way (assumption)"},
    LinkRow{"Ethernet-25G", "ethernet", "25 Gigabit Ethernet, TCP sockets", "25Gbps", "10us",
            "IEEE 802.3by (2016) line rate", "latency: kernel TCP one way (assumption)"},
    LinkRow{"Ethernet-100G", "ethernet", "100 Gigabit Ethernet, RoCEv2", "100Gbps", "2us",
            "IEEE 802.3bj/802.3cd line rate", "latency: RoCEv2 RDMA one way (assumption)"},
    LinkRow{"Ethernet-200G", "ethernet", "200 Gigabit Ethernet, RoCEv2", "200Gbps", "2us",
            "IEEE 802.3bs/802.3cd (2017-2018) line rate", "latency: RoCEv2 RDMA one way (assumption)"},
    LinkRow{"Ethernet-400G", "ethernet", "400 Gigabit Ethernet, RoCEv2", "400Gbps", "2us",
            "IEEE 802.3bs (2017) line rate", "latency: RoCEv2 RDMA one way (assumption)"},
    LinkRow{"IB-EDR", "infiniband", "InfiniBand EDR 4x, 100 Gbit/s data rate", "100Gbps", "1us",
            "InfiniBand Trade Association roadmap; NVIDIA ConnectX-5 VPI datasheet",
            "latency: RDMA through one switch (assumption)"},
    LinkRow{"IB-HDR", "infiniband", "InfiniBand HDR 4x, 200 Gbit/s data rate", "200Gbps", "1us",
            "InfiniBand Trade Association roadmap; NVIDIA ConnectX-6 VPI datasheet",
            "latency: RDMA through one switch (assumption)"},
    LinkRow{"IB-NDR", "infiniband", "InfiniBand NDR 4x, 400 Gbit/s data rate (ConnectX-7)", "400Gbps", "1us",
            "InfiniBand Trade Association roadmap; NVIDIA ConnectX-7 datasheet; 4 x 100G-PAM4 "
            "(docs.nvidia.com/networking/display/400g100gpam4ovpub)",
            "latency: RDMA through one switch (assumption)"},
    LinkRow{"IB-XDR", "infiniband", "InfiniBand XDR, 800 Gbit/s data rate (ConnectX-8 SuperNIC, Quantum-X800)",
            "800Gbps", "1us",
            "NVIDIA ConnectX-8 SuperNIC user manual: up to 800 Gb/s InfiniBand "
            "(docs.nvidia.com/networking/display/connectx8supernic/introduction)",
            "latency: RDMA through one switch (assumption)"},
};

std::optional<FlopsPerSecond> optional_rate(std::string_view text) {
  if (text.empty()) return std::nullopt;
  return parse_as<FlopsPerSecond>(text);
}

GpuSpec to_spec(const GpuRow& row) {
  return GpuSpec{std::string(row.name),
                 std::string(row.description),
                 optional_rate(row.fp32),
                 optional_rate(row.tf32),
                 optional_rate(row.fp16),
                 optional_rate(row.bf16),
                 optional_rate(row.fp8),
                 parse_as<Bytes>(row.memory),
                 parse_as<BytesPerSecond>(row.memory_bandwidth),
                 std::string(row.nvlink),
                 parse_as<BytesPerSecond>(row.nvlink_per_direction),
                 std::string(row.pcie),
                 std::string(row.source),
                 row.nvlink_bridge_only,
                 optional_rate(row.mxfp8),
                 row.nvlink_domain,
                 std::string(row.host_link),
                 row.fp8_any_layout};
}

LinkSpec to_spec(const LinkRow& row) {
  return LinkSpec{std::string(row.name),          std::string(row.kind),
                  std::string(row.description),   parse_as<BytesPerSecond>(row.bandwidth_per_direction),
                  parse_as<Seconds>(row.latency), fmt::format("{}; {}", row.bandwidth_source, row.latency_source)};
}

template <class Spec>
void check_unique(const std::vector<Spec>& specs, std::string_view what) {
  std::set<std::string_view> seen;
  for (const Spec& spec : specs)
    if (!seen.insert(spec.name).second)
      throw std::invalid_argument(fmt::format("hardware catalog: {} '{}' listed twice", what, spec.name));
}

template <class Spec>
const Spec* find_by_name(const std::vector<Spec>& specs, std::string_view name) {
  for (const Spec& spec : specs)
    if (spec.name == name) return &spec;
  return nullptr;
}

template <class Spec>
std::vector<std::string> names_of(const std::vector<Spec>& specs) {
  std::vector<std::string> names;
  names.reserve(specs.size());
  for (const Spec& spec : specs) names.push_back(spec.name);
  return names;
}

std::string rate_or_dash(const std::optional<FlopsPerSecond>& rate) {
  return rate ? format_flop_rate(*rate) : std::string("-");
}

}  // namespace

std::optional<FlopsPerSecond> GpuSpec::peak(Dtype dtype) const {
  switch (dtype) {
    case Dtype::fp32:
      return peak_fp32;
    case Dtype::tf32:
      return peak_tf32;
    case Dtype::fp16:
      return peak_fp16;
    case Dtype::bf16:
      return peak_bf16;
    case Dtype::fp8:
      return peak_fp8;
    case Dtype::mxfp8:
      return peak_mxfp8;
  }
  return std::nullopt;
}

HardwareCatalog::HardwareCatalog(std::vector<GpuSpec> gpus, std::vector<LinkSpec> links)
    : gpus_(std::move(gpus)), links_(std::move(links)) {
  check_unique(gpus_, "GPU");
  check_unique(links_, "link");
}

const HardwareCatalog& HardwareCatalog::builtin() {
  static const HardwareCatalog catalog = [] {
    std::vector<GpuSpec> gpus;
    for (const GpuRow& row : kGpus) gpus.push_back(to_spec(row));
    std::vector<LinkSpec> links;
    for (const LinkRow& row : kLinks) links.push_back(to_spec(row));
    return HardwareCatalog(std::move(gpus), std::move(links));
  }();
  return catalog;
}

const GpuSpec* HardwareCatalog::find_gpu(std::string_view name) const { return find_by_name(gpus_, name); }
const LinkSpec* HardwareCatalog::find_link(std::string_view name) const { return find_by_name(links_, name); }
std::vector<std::string> HardwareCatalog::gpu_names() const { return names_of(gpus_); }
std::vector<std::string> HardwareCatalog::link_names() const { return names_of(links_); }

std::string format_gpu_table(const HardwareCatalog& catalog) {
  constexpr std::string_view kRow = "{:<14} {:>13} {:>13} {:>13} {:>13} {:>13} {:>13} {:>9} {:>11}  {:<19} {:<6} {}\n";
  std::string out = "Dense peak rates (tensor cores where present, no sparsity); bandwidths per direction.\n";
  out += fmt::format(fmt::runtime(kRow), "NAME", "FP32", "TF32", "FP16", "BF16", "FP8", "MXFP8", "MEMORY", "MEM BW",
                     "NVLINK (PER DIR)", "PCIE", "NVLINK DOMAIN");
  for (const GpuSpec& gpu : catalog.gpus()) {
    const std::string nvlink =
        gpu.nvlink.empty() ? "-" : fmt::format("{} {}", gpu.nvlink, format_bandwidth(gpu.nvlink_bandwidth));
    out += fmt::format(fmt::runtime(kRow), gpu.name, rate_or_dash(gpu.peak_fp32), rate_or_dash(gpu.peak_tf32),
                       rate_or_dash(gpu.peak_fp16), rate_or_dash(gpu.peak_bf16), rate_or_dash(gpu.peak_fp8),
                       rate_or_dash(gpu.peak_mxfp8), format_bytes(gpu.memory), format_bandwidth(gpu.memory_bandwidth),
                       nvlink, gpu.pcie, gpu.nvlink_domain > 0 ? std::to_string(gpu.nvlink_domain) : "-");
  }
  return out;
}

std::string format_link_table(const HardwareCatalog& catalog) {
  constexpr std::string_view kRow = "{:<14} {:<11} {:>12} {:>9}  {}\n";
  std::string out = "Bandwidth per direction (NVLink: one link; PCIe: x16); latency one way, one hop.\n";
  out += fmt::format(fmt::runtime(kRow), "NAME", "KIND", "BW (PER DIR)", "LATENCY", "DESCRIPTION");
  for (const LinkSpec& link : catalog.links())
    out += fmt::format(fmt::runtime(kRow), link.name, link.kind, format_bandwidth(link.bandwidth),
                       format_seconds(link.latency), link.description);
  return out;
}

}  // namespace dnnsim
