// MLCommons Chakra execution traces (ETs) ⇄ TaskGraph. Schema: traces/chakra/schema/et_def.proto
// (Apache-2.0); format as Chakra's protoio/feeder read it: one file per rank, a stream of
// length-delimited messages (a varint byte count, then the message), first one GlobalMetadata, then
// one Node per operation; a node's data_deps and ctrl_deps name other nodes of the same file by id.
// (Sridharan et al., "Chakra: Advancing Performance Benchmarking and Co-design using Standardized
// Execution Traces", arXiv:2305.14516, 2023.)
//
// Import, node type by node type (docs/chakra.md):
//   COMP_NODE        a Compute on the rank's device, stream "compute". Its cost is the recorded
//                    `duration_micros` when non-zero (a measured time on `recorded_on`, scaled to
//                    the device's GPU by the cost model), else the roofline of the attributes
//                    `num_ops` (FLOPs) and `tensor_size` (bytes moved).
//   MEM_LOAD_NODE,   the same, as memory traffic: `tensor_size` bytes, or the recorded duration.
//   MEM_STORE_NODE
//   COMM_COLL_NODE   one Collective per matching set of nodes, stream "comm": `comm_type`
//                    (CollectiveCommType; BARRIER as an empty all-reduce), `comm_size` bytes per
//                    member. Its group is named by `pg_name` or `comm_group` (the ranks whose files
//                    hold nodes of that name), all ranks when neither is given (what Chakra's text
//                    converter writes). The k-th collective of a group on one rank meets the k-th on
//                    every other member, as NCCL calls on one communicator do; their types and sizes
//                    must agree.
//   COMM_SEND_NODE / one Transfer per send and the receive that matches it (`comm_dst`/`comm_src`
//   COMM_RECV_NODE   and `comm_tag`, in order), stream "p2p" of the sender; `comm_size` bytes.
//   METADATA_NODE    no task: whoever depends on it depends on its dependencies.
// Data and control dependencies both become TaskGraph dependencies. A file's tasks keep their file
// order on each stream. Attributes dnnsim does not use are ignored with one warning per name.
// Files written by export_chakra() also carry `dnnsim.*` attributes (dtype, phase, stream, memory,
// exact measured time) so that import(export(g)) gives g back for everything dnnsim models; a node
// with them ignores `duration_micros`, which is there for other tools (ASTRA-sim, SimAI).
//
// Errors are located by file and message index (0 = the GlobalMetadata, 1 = the first node):
// "dir/trace.3.et: message 12: error: …", all of them at once.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/common/units.hpp"
#include "models/program/task_graph.hpp"

namespace dnnsim {

struct ChakraImportOptions {
  Dtype dtype = Dtype::fp32;  // kernel precision of roofline-costed nodes
  // Catalog GPU the recorded durations were measured on; empty: the GPU each rank is mapped onto
  // (no scaling), `rank_gpus[r]`.
  std::string recorded_on;
  std::vector<std::string> rank_gpus;  // catalog GPU of each rank's device
};

struct ChakraImport {
  TaskGraph graph;
  std::vector<std::string> warnings;  // one per unknown attribute name (with the first file and message)
};

// Reads one ET per rank: files[r] runs on devices[r] (a device name of the returned graph).
// @throw InputError with every problem found (unreadable or truncated file, bad message, unknown
//        node type, dependency on a missing node, collectives that do not match across ranks, …).
[[nodiscard]] ChakraImport import_chakra(const std::vector<std::string>& files, const std::vector<std::string>& devices,
                                         const ChakraImportOptions& options);

// `pattern` with its "%d" replaced by each rank, for ranks 0…count−1 ("dir/trace.%d.et").
[[nodiscard]] std::vector<std::string> expand_rank_pattern(const std::string& pattern, std::size_t count);

struct ChakraExport {
  std::vector<std::string> files;  // rank order
  // Dependencies between tasks that share no device (a compute on one GPU waiting for a compute on
  // another): a Chakra node can only name nodes of its own file, so these are not written.
  std::size_t dropped_dependencies = 0;
};

// Writes one ET per device of `graph`, `dir`/trace.<rank>.et with rank = device index. `duration`
// gives a compute task's time on its device, written as `duration_micros` for tools that do not
// cost nodes themselves; empty: written only for measured times.
// @throw InputError when a file cannot be written.
ChakraExport export_chakra(const TaskGraph& graph, const std::string& dir,
                           const std::function<std::optional<Seconds>(const Task&)>& duration = {});

}  // namespace dnnsim
