// The Chakra workload kind (`workload.kind: chakra`, docs/chakra.md): MLCommons Chakra execution
// traces, one file per rank, read by traces/chakra and simulated as the TaskGraph they describe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/workloads/workload_kind.hpp"
#include "traces/chakra/chakra_trace.hpp"

namespace dnnsim {

struct ChakraWorkload : WorkloadSpec {
  std::vector<std::string> files;  // one per rank, resolved against the scenario's folder
  std::vector<std::string> ranks;  // the GPU each rank runs on (cluster GPU names), rank order
  ChakraImportOptions options;
};

[[nodiscard]] std::shared_ptr<const WorkloadKind> make_chakra_kind();

// `dnnsim lower SCENARIO --chakra DIR`: the scenario's TaskGraph (WorkloadKind::lower) as one ET per
// device, DIR/trace.<rank>.et, with every compute node's `duration_micros` its cost-model time on
// the device's GPU (for ASTRA-sim and SimAI, which do not cost nodes).
// @throw InputError when the kind has no TaskGraph or a file cannot be written.
ChakraExport export_scenario_chakra(const Scenario& scenario, const std::string& dir);

}  // namespace dnnsim
