// What a job scheduler sees and what it answers: a pure snapshot of the cluster (servers, GPU types,
// free GPUs, running and queued jobs with their attained service) and a list of decisions (start a
// job on a placement, preempt it, migrate it). No SimGrid here: the cluster simulation (sim/cluster/)
// builds the snapshot at each scheduling event and applies the decisions, so schedulers are unit
// tested on hand-built states (tests/unit/planners/job_scheduler_test.cpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/common/units.hpp"
#include "traces/jobs/job_trace.hpp"

namespace dnnsim {

using JobId = std::size_t;  // index of the job in the replayed JobTrace

struct ServerInfo {
  int rack = 0;  // servers of a rack share a top-of-rack switch
  int gpus = 0;
  std::string gpu_type;               // catalog name ("T4", "V100")
  double gpu_speed = 1.0;             // relative compute speed of this GPU type (fastest type = 1 when known)
  BytesPerSecond intra_bandwidth{0};  // GPU↔GPU inside the server, per direction (NVLink/PCIe)
  BytesPerSecond nic_bandwidth{0};    // the server's NIC, per direction
  Seconds link_latency{0};            // one hop of the inter-server network
  int cpus = 0;                       // CPU cores, which parameter servers take (0: none declared)
};

// GPUs of one job: how many on each server. Sorted by server index, no zero counts. A
// parameter-server job (JobRecord::ps_per_worker > 0) also has its parameter servers, each taking
// the job's ps_cores CPU cores of the server it is on.
struct Placement {
  std::vector<std::pair<int, int>> slices;  // (server index, GPUs on it)
  std::vector<std::pair<int, int>> ps;      // (server index, parameter servers on it); empty: none

  [[nodiscard]] int gpus() const;
  [[nodiscard]] int parameter_servers() const;
  [[nodiscard]] int servers() const { return static_cast<int>(slices.size()); }
  // GPUs per server, largest first: the "placement shape" speed tables are keyed by (Pollux `22`).
  [[nodiscard]] std::vector<int> shape() const;
  [[nodiscard]] bool empty() const { return slices.empty(); }
  [[nodiscard]] std::string to_string() const;  // "s0:4+s3:2", then " ps s0:1+s3:1" when it has any
  friend bool operator==(const Placement&, const Placement&) = default;
};

// A consolidated placement of `gpus` GPUs on an empty cluster (servers in index order): the shape
// speed tables are asked for when a scheduler considers a GPU count before placing.
[[nodiscard]] Placement nominal_placement(const std::vector<ServerInfo>& servers, int gpus);

struct JobView {
  JobId id = 0;
  const JobRecord* record = nullptr;
  int gpus = 1;                       // GPUs it asks for
  double total_iterations = 0.0;      // its work
  double done_iterations = 0.0;       // progress so far (kept across preemptions: checkpoints)
  Seconds attained;                   // time it has run (wall-clock, all attempts)
  double attained_gpu_seconds = 0.0;  // Tiresias' 2D attained service: Σ run time × GPUs
  Seconds queued_since;               // submission or last preemption
  Seconds last_started;               // start of the current or last attempt
  int preemptions = 0;
  double solo_rate = 0.0;              // iterations/s at `gpus` GPUs consolidated, alone (oracle speed)
  std::optional<Placement> placement;  // set while running
  // Running packed on the GPUs of this job (Gandiva's packing: two single-GPU jobs share one GPU).
  std::optional<JobId> packed_with;

  [[nodiscard]] double remaining_iterations() const { return total_iterations - done_iterations; }
  // Oracle remaining time at solo speed (SRTF); the trace duration for a job not yet started.
  [[nodiscard]] Seconds oracle_remaining() const;
  [[nodiscard]] Seconds oracle_duration() const;
};

struct ClusterState {
  Seconds now;
  std::vector<ServerInfo> servers;
  std::vector<int> free_gpus;    // per server
  std::vector<int> free_cpus;    // per server: cores no parameter server holds
  std::vector<JobView> running;  // by id
  std::vector<JobView> queued;   // arrived, not running; by id (= submission order)

  [[nodiscard]] int total_gpus() const;
  [[nodiscard]] int total_free() const;
};

enum class SchedulerEvent { arrival, completion, round };

struct Decision {
  enum class Kind { start, preempt, migrate, pack };
  Kind kind = Kind::start;
  JobId job = 0;
  Placement placement;  // start / migrate: where; preempt, pack: empty
  // pack: a running single-GPU job, not packed, whose GPU the queued single-GPU `job` shares from now
  // on; both then run at the speed model's packed_slowdown (time-shared compute, Gandiva OSDI'18 §4.3).
  JobId partner = 0;
};

}  // namespace dnnsim
