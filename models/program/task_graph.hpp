// The TaskGraph IR: the contract between "what to run" (workload builders, schedules) and "how long
// it takes" (sim/). A DAG of tasks, each pinned to a device and a stream (see docs/architecture.md
// and docs/taskgraph.md for the JSON schema).
//
// Semantics, as CUDA streams: tasks on one (device, stream) run in the order they were added;
// different streams of a device overlap unless a dependency orders them. A Collective sits on the
// given stream of every device of its group and is expanded by sim/ into point-to-point steps
// (models/program/collective_algorithms.hpp) so that contention and slow links show in its time.
// Memory effects: `alloc_bytes` is taken on the task's device when it starts and `free_bytes`
// released when it ends, so peak memory per device is measured, not assumed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "models/common/diagnostics.hpp"
#include "models/common/interned_string.hpp"
#include "models/common/units.hpp"
#include "models/dnn/layer_model.hpp"

namespace dnnsim {

using DeviceId = std::uint32_t;
using StreamId = std::uint32_t;
using TaskId = std::uint32_t;

// What a compute task does in training; reports break busy time down by it.
// `recompute` is a forward pass run again before its backward (activation re-materialization): it
// counts in hardware FLOPs but not in model FLOPs (Megatron-LM's HFU vs MFU).
enum class Phase { forward, backward, weight_grad, optimizer, communication, other, recompute };
[[nodiscard]] std::string_view phase_name(Phase phase);
[[nodiscard]] std::optional<Phase> phase_from_name(std::string_view name);
[[nodiscard]] std::vector<std::string> phase_names();

// Numeric format of a compute task; selects the GPU's peak rate (models/hardware). mxfp8 is FP8
// with an E8M0 scale per 32 elements (OCP MX v1.0), which Blackwell's tensor cores take natively: its
// own peak (GpuSpec::peak_mxfp8) and, in a calibration table, its own curves and grids (a table
// without them reads its fp8 ones: compute_cost.hpp).
// One byte, as LayerKind: with them Compute, GEMM shape included, is no larger than Collective, so
// a Task (its op a variant of Compute, Transfer and Collective) stays 160 bytes.
enum class Dtype : std::uint8_t { fp32, tf32, fp16, bf16, fp8, mxfp8 };
inline constexpr std::size_t kDtypeCount = 6;  // for arrays indexed by Dtype
[[nodiscard]] std::string_view dtype_name(Dtype dtype);
[[nodiscard]] std::optional<Dtype> dtype_from_name(std::string_view name);
[[nodiscard]] std::vector<std::string> dtype_names();
// Bytes per element: 4 (fp32, tf32), 2 (fp16, bf16), 1 (fp8, mxfp8: its scales are a recipe's, PrecisionRecipe).
[[nodiscard]] double dtype_bytes(Dtype dtype);

enum class CollectiveKind { all_reduce, all_gather, reduce_scatter, broadcast, all_to_all };
[[nodiscard]] std::string_view collective_kind_name(CollectiveKind kind);
[[nodiscard]] std::optional<CollectiveKind> collective_kind_from_name(std::string_view name);
[[nodiscard]] std::vector<std::string> collective_kind_names();

// How sim/ runs a collective (docs/collectives.md, "Fidelity levels"): `step` runs every step of its
// algorithm as a flow (the reference); `flow` runs, per phase of the algorithm, one flow per
// (sender, receiver) pair carrying that pair's whole volume, delayed so that alone on its links it
// ends when the step-level run would — cost O(p) flows per ring collective instead of O(p²).
enum class CollectiveFidelity { step, flow };
[[nodiscard]] std::string_view collective_fidelity_name(CollectiveFidelity fidelity);
[[nodiscard]] std::optional<CollectiveFidelity> collective_fidelity_from_name(std::string_view name);
[[nodiscard]] std::vector<std::string> collective_fidelity_names();

// Which GEMMs a compute task of shape (m, n, k) is, as BLAS names its operands' layouts: the same
// product runs at different rates when an operand is read transposed (a kernel streams the inner
// dimension of one operand against the other's; measured on this project's CPU, C = A·Bᵀ with m = 64
// runs 6–10% below A·B: docs/calibration.md, "Operand layouts and backward passes").
enum class GemmOp : std::uint8_t {
  nn,        // C[m×n] = A[m×k]·B[k×n]
  nt,        // C[m×n] = A[m×k]·B[n×k]ᵀ
  tn,        // C[m×n] = A[k×m]ᵀ·B[k×n]
  backward,  // both gradients of the nn product (a layer's backward pass): dA[m×k] = dC·Bᵀ, the nt GEMM
             // (m, k, n), and dB[k×n] = Aᵀ·dC, the tn GEMM (k, n, m); 2mnk FLOPs each
  // Both gradients of the nt product (the backward pass of a layer whose weights are stored out × in,
  // PyTorch's nn.Linear: Y = X·Wᵀ): dA[m×k] = dC·B, the nn GEMM (m, k, n), and dB[n×k] = dCᵀ·A, the
  // tn GEMM (n, k, m); 2mnk FLOPs each.
  backward_nt,
};
// Whether `op` is a pair of gradient GEMMs rather than one GEMM (a calibration grid measures one).
[[nodiscard]] inline bool is_backward_pair(GemmOp op) { return op == GemmOp::backward || op == GemmOp::backward_nt; }
[[nodiscard]] std::string_view gemm_op_name(GemmOp op);
[[nodiscard]] std::optional<GemmOp> gemm_op_from_name(std::string_view name);
[[nodiscard]] std::vector<std::string> gemm_op_names();

// The (m, n, k) of a compute task that is one GEMM (or a backward pair, `op`), 2mnk FLOPs per GEMM;
// all 0 when the task is not one or its shape is not known. It selects the shape-aware efficiency of
// a calibration table (models/calibration/calibration.hpp, GemmEfficiencyGrid).
struct GemmShape {
  std::uint32_t m = 0;
  std::uint32_t n = 0;
  std::uint32_t k = 0;
  GemmOp op = GemmOp::nn;  // one byte: the shape is 16 bytes and Compute 72, no larger than Collective
  [[nodiscard]] bool known() const { return m > 0 && n > 0 && k > 0; }
};

// Work on one device. Its duration comes from the cost model (models/cost): the roofline of
// `flops` and `bytes_accessed` on that device's GPU, unless a measured time is given.
struct Compute {
  DeviceId device = 0;
  Flop flops{0};
  Bytes bytes_accessed{0};
  Dtype dtype = Dtype::fp32;
  LayerKind kernel = LayerKind::other;  // what the kernel computes: selects the calibration curve
  // How many kernels the task stands for (a pipeline chunk of several layers: one per layer), each
  // issued by the host when the device's calibration table models kernel launches
  // (LaunchCalibration); otherwise unused. 16 bits, in what would be padding before `gemm`.
  std::uint16_t launches = 1;
  // A backward pass's kernels: selects the kind's backward curve where the calibration table has one
  // (CalibrationTable::backward_compute: a fused attention's backward).
  bool backward = false;
  // Forward work without a mask (a CP core's keys seen whole: the ring's off-diagonal steps,
  // all_gather's keys before each chunk's own): selects the kind's unmasked curve where the
  // calibration table has one (CalibrationTable::unmasked_compute).
  bool unmasked = false;
  GemmShape gemm;  // when the task is one GEMM of known shape
  // Measured duration on the GPU model named `measured_on` (a catalog name); scaled to other GPUs.
  std::optional<Seconds> measured_time;
  InternedString measured_on;
};

// Which way a Transfer crosses between a GPU's memory and its host's (cudaMemcpyAsync to or from
// pinned host memory: Megatron-Core's activation offload), over the platform's GPU↔host link.
enum class HostCopy : std::uint8_t { none, to_host, from_host };
[[nodiscard]] std::string_view host_copy_name(HostCopy copy);
[[nodiscard]] std::optional<HostCopy> host_copy_from_name(std::string_view name);
[[nodiscard]] std::vector<std::string> host_copy_names();  // "none", "to_host", "from_host"

// Point-to-point copy from `src` to `dst`, routed over the platform's links; with `host`, a copy
// between GPU src = dst and its host's memory.
struct Transfer {
  DeviceId src = 0;
  DeviceId dst = 0;
  Bytes size{0};
  // Under a launch model, whether the sender's host waits for the send and the receiver's host for
  // the receive before issuing more kernels (PipelineSchedule::host_synchronizes_sends).
  bool host_synchronizes = true;
  HostCopy host = HostCopy::none;
};

// A collective over `group`; `size` is the buffer size on each member (the all-reduce input, the
// all-gather output, the broadcast payload), as NCCL counts it. `algorithm` names an entry of the
// collective-algorithm registry; empty means the default rule.
struct Collective {
  CollectiveKind kind = CollectiveKind::all_reduce;
  std::vector<DeviceId> group;
  Bytes size{0};
  InternedString algorithm;
  DeviceId root = 0;  // broadcast source
  // Unset: the workload's `collective_fidelity`, else the default rule (default_collective_fidelity).
  std::optional<CollectiveFidelity> fidelity;
  // How many library calls of equal size this task stands for (a lowering that sums the same-group
  // calls of a step into one task: Megatron's per-block all-reduces). The calibrated per-call latency
  // (CollectiveCalibration::latency) is paid once per call; the bytes are `size` in all.
  std::uint32_t calls = 1;
  // Only group[0] is simulated; the other members are symmetric copies of it that run no task (a
  // tensor-parallel group at tensor_parallel_fidelity: group). group[0] spends the collective's time
  // alone on its links — the calibrated latency of its calls plus the algorithm's uncontended time
  // over the group's routes (models/cost/collective_cost.hpp); no flow runs, and the link traffic is
  // counted from the algorithm's flows instead (LinkTrafficRecorder, sim/exec/observers.hpp).
  bool mirrored = false;
  // group[0]'s part of a symmetric exchange that every member issues for itself (each GPU of an
  // expert-parallel group its own all-to-all: planners/schedules/step_communication.hpp): group[0]
  // spends the collective's time alone on its links, as a mirrored one does, while the other members
  // run their own tasks (no device copies another), and only group[0]'s own flows count as link traffic.
  bool alone = false;
  // The group stands for `copies` symmetric copies of itself laid end to end (a data-parallel
  // window: PipelineWorkload::replica_window, docs/collectives.md "Symmetric windows"): only `group`
  // runs, with the chunks and rounds of a group of group.size() × copies members, and a ring's last
  // hop lands on group[0], which stands for the next copy's first member. Exact when the copies are
  // translates of one another on a platform that is symmetric under that translation.
  std::uint32_t copies = 1;
};

// The members `c` stands for: group.size() × copies.
[[nodiscard]] inline std::size_t logical_size(const Collective& c) { return c.group.size() * c.copies; }

// Where a task was read from, for messages (empty when built in code): a SourceLocation whose file
// is interned, 16 bytes instead of 40 (a graph read from one file repeats it in every task). Kept by
// the TaskGraph beside its tasks, only for a graph that has some (TaskGraph::origin).
struct TaskOrigin {
  InternedString file;
  int line = 0;
  int column = 0;
  TaskOrigin() = default;
  TaskOrigin(const SourceLocation& where)  // NOLINT(google-explicit-constructor): assigned from readers' locations
      : file(where.file), line(where.line), column(where.column) {}
  operator SourceLocation() const { return SourceLocation{file, line, column}; }  // NOLINT(google-explicit-constructor)
};

// 144 bytes (232 with plain strings, 160 with the origin inside: docs/performance.md, "Compact task
// records", "Memory per operation"); a 16,384-GPU pipeline holds 4.5 M of them.
struct Task {
  std::variant<Compute, Transfer, Collective> op;
  StreamId stream = 0;
  Phase phase = Phase::other;
  std::uint32_t iteration = 0;
  InternedString label;      // labels repeat across replicas ("fwd s3 mb12"): interned
  std::vector<TaskId> deps;  // tasks that must finish before this one starts
  Bytes alloc_bytes{0};      // taken on the task's device(s) at start
  Bytes free_bytes{0};       // released on the task's device(s) at end

  [[nodiscard]] bool is_compute() const { return std::holds_alternative<Compute>(op); }
  [[nodiscard]] bool is_transfer() const { return std::holds_alternative<Transfer>(op); }
  [[nodiscard]] bool is_collective() const { return std::holds_alternative<Collective>(op); }
  // The devices the task occupies: the compute device, the transfer source, or the collective group
  // (of a mirrored collective, its first member: the others run nothing).
  [[nodiscard]] std::vector<DeviceId> devices() const;
};
static_assert(sizeof(Task) <= 144);

class TaskGraph {
 public:
  // Devices and streams are named; tasks refer to them by index.
  DeviceId add_device(std::string name);
  StreamId add_stream(std::string name);
  // Returns the id of an existing stream with that name, or adds it.
  StreamId stream(const std::string& name);
  // `origin`: where the task was read from (a file's graph), for messages.
  TaskId add(Task task, const SourceLocation& origin = {});

  [[nodiscard]] const std::vector<std::string>& devices() const { return devices_; }
  [[nodiscard]] const std::vector<std::string>& streams() const { return streams_; }
  [[nodiscard]] const std::vector<Task>& tasks() const { return tasks_; }
  [[nodiscard]] std::vector<Task>& tasks() { return tasks_; }
  [[nodiscard]] const Task& task(TaskId id) const { return tasks_.at(id); }
  [[nodiscard]] std::optional<DeviceId> device_by_name(std::string_view name) const;
  // Where task `id` was read from; empty for a task built in code.
  [[nodiscard]] SourceLocation origin(TaskId id) const;
  [[nodiscard]] std::uint32_t iteration_count() const;

  // Every structural problem: a dependency on a task that does not exist, a device or stream
  // index out of range, a transfer to itself, an empty or duplicated collective group, a cycle
  // (reported on one task of it, with the cycle's labels). Located by each task's origin().
  [[nodiscard]] std::vector<Diagnostic> validate() const;

  // A device that runs no task because it is a symmetric copy of `source` (a data-parallel replica
  // outside the simulated window): reports give it its source's figures. Mirrored collectives
  // (Collective::mirrored) say the same of their other members without an entry here.
  void set_mirror(DeviceId copy, DeviceId source);

  // Frees every task's dependency list: a run's graph once lowered, when no task will be appended
  // (sim/run/simulation.cpp; nothing after the lowering reads them, and at 16,384 GPUs they are
  // ~50 MB: docs/performance.md, "Memory per operation"). The graph is then no longer valid input.
  void drop_dependencies();
  // (copy, source) in the order set.
  [[nodiscard]] const std::vector<std::pair<DeviceId, DeviceId>>& mirrors() const { return mirrors_; }

 private:
  std::vector<std::string> devices_;
  std::vector<std::string> streams_;
  std::vector<Task> tasks_;
  std::vector<TaskOrigin> origins_;  // by task; empty until a task with an origin is added
  std::vector<std::pair<DeviceId, DeviceId>> mirrors_;
};

}  // namespace dnnsim
