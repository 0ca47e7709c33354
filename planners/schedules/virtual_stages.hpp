// The virtual stages of a pipeline plan (a stage's chunk, with its replicas and their shares of a
// micro-batch) and the split-concat pieces between two of them: the shapes pipeline_lowering.cpp
// lowers to tasks.
#pragma once

#include <string>
#include <vector>

#include "planners/schedules/pipeline_lowering.hpp"

namespace dnnsim::pipeline_detail {

// What the lowering needs to know about one virtual stage.
struct VirtualStage {
  std::size_t stage = 0;
  int chunk = 0;
  LayerRange layers;
  std::vector<DeviceId> devices;    // replicas
  std::vector<SampleShare> shares;  // per replica, of one micro-batch
  // What crosses the cut after the chunk (Layer::bytes_across_cut): what moves to the next stage.
  Bytes output_per_sample{0};
  Bytes input_per_sample{0};  // what re-materialization keeps: the previous layer's output, 0 for layer 0
  std::string name;           // "s1" or, interleaved, "s1c0"
};

// Every (chunk, stage) of the plan in pipeline order: chunk-major, as an interleaved schedule
// traverses them.
[[nodiscard]] std::vector<VirtualStage> virtual_stages(const PipelineWorkload& workload);

// One split-concat piece of a boundary: the samples replica `lower` of a virtual stage and replica
// `upper` of the next one have in common.
struct SamplePiece {
  int lower = 0;
  int upper = 0;
  int samples = 0;
};

// A boundary's pieces indexed by the replica that sends them: forwards by the lower replica,
// backwards by the upper one. Built once per boundary: every replica of every micro-batch looks its
// pieces up, and scanning all replica pairs each time made lowering cubic in the replica count.
struct BoundaryPieces {
  std::vector<std::vector<SamplePiece>> by_lower;
  std::vector<std::vector<SamplePiece>> by_upper;
};

[[nodiscard]] BoundaryPieces overlapping_pieces(const VirtualStage& lower, const VirtualStage& upper);

}  // namespace dnnsim::pipeline_detail
