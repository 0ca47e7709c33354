#include "planners/schedules/virtual_stages.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/dnn/tensor_parallel.hpp"

namespace dnnsim::pipeline_detail {

std::vector<VirtualStage> virtual_stages(const PipelineWorkload& workload) {
  const PipelinePlan& plan = workload.plan;
  const std::size_t p = plan.stages.size();
  const int chunks = plan.chunks_per_stage();
  std::vector<VirtualStage> result;
  for (int c = 0; c < chunks; ++c)
    for (std::size_t s = 0; s < p; ++s) {
      VirtualStage v;
      v.stage = s;
      v.chunk = c;
      v.layers = plan.stages[s].chunks[c];
      v.devices = plan.stages[s].devices;
      const int replicas = static_cast<int>(v.devices.size());
      for (int q = 0; q < replicas; ++q) v.shares.push_back(replica_share(plan.micro_batch_size(), replicas, q));
      if (workload.transformer) {
        // Each context rank sends its s/CP tokens.
        v.output_per_sample = boundary_bytes_per_rank(*workload.transformer, workload.tensor_parallel) /
                              std::max(1, workload.llm.context);
        v.input_per_sample = v.output_per_sample;  // unused: full recomputation keeps each block's input
      } else {
        v.output_per_sample = workload.model.layers[v.layers.end - 1].bytes_across_cut();
        v.input_per_sample =
            v.layers.begin == 0 ? Bytes(0) : workload.model.layers[v.layers.begin - 1].bytes_across_cut();
      }
      v.name = chunks == 1 ? fmt::format("s{}", s) : fmt::format("s{}c{}", s, c);
      result.push_back(std::move(v));
    }
  return result;
}

BoundaryPieces overlapping_pieces(const VirtualStage& lower, const VirtualStage& upper) {
  BoundaryPieces pieces;
  pieces.by_lower.resize(lower.shares.size());
  pieces.by_upper.resize(upper.shares.size());
  for (std::size_t a = 0; a < lower.shares.size(); ++a)
    for (std::size_t b = 0; b < upper.shares.size(); ++b) {
      const SampleShare& x = lower.shares[a];
      const SampleShare& y = upper.shares[b];
      const int overlap = std::min(x.begin + x.count, y.begin + y.count) - std::max(x.begin, y.begin);
      if (overlap <= 0) continue;
      const SamplePiece piece{static_cast<int>(a), static_cast<int>(b), overlap};
      pieces.by_lower[a].push_back(piece);
      pieces.by_upper[b].push_back(piece);
    }
  return pieces;
}

}  // namespace dnnsim::pipeline_detail
