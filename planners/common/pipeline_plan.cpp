#include "planners/common/pipeline_plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "models/common/units.hpp"

namespace dnnsim {

std::string DeviceNames::gpu(std::size_t g) const { return g < gpus_.size() ? gpus_[g] : fmt::format("#{}", g); }

std::string DeviceNames::name(DeviceId d) const { return range(d, d); }

std::string DeviceNames::range(DeviceId first, DeviceId last) const {
  const auto ranks = static_cast<std::size_t>(ranks_);
  const std::size_t begin = first * ranks;
  const std::size_t end = (last + 1) * ranks - 1;
  return begin == end ? gpu(begin) : fmt::format("{}…{}", gpu(begin), gpu(end));
}

std::vector<LayerRange> PipelinePlan::virtual_stages() const {
  std::vector<LayerRange> result;
  const int chunks = chunks_per_stage();
  for (int c = 0; c < chunks; ++c)
    for (const PipelineStage& stage : stages)
      if (static_cast<std::size_t>(c) < stage.chunks.size()) result.push_back(stage.chunks[c]);
  return result;
}

std::vector<std::string> PipelinePlan::problems(std::size_t layer_count, std::size_t device_count) const {
  std::vector<std::string> result;
  if (stages.empty()) return {"the plan has no stage"};
  if (micro_batches < 1)
    result.push_back(fmt::format("micro_batches must be at least 1, got {}", micro_batches));
  else if (global_batch % micro_batches != 0)
    result.push_back(fmt::format("global_batch {} is not a multiple of micro_batches {}", global_batch, micro_batches));
  const std::size_t chunks = stages.front().chunks.size();
  std::set<DeviceId> used;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const PipelineStage& stage = stages[s];
    if (stage.chunks.size() != chunks || chunks == 0)
      result.push_back(fmt::format("stage {} has {} model chunks; every stage needs the same number (≥ 1), {}", s,
                                   stage.chunks.size(), chunks));
    if (stage.devices.empty()) result.push_back(fmt::format("stage {} has no device", s));
    for (DeviceId d : stage.devices) {
      if (d >= device_count)
        result.push_back(fmt::format("stage {}: device {} does not exist ({} GPUs)", s, d, device_count));
      else if (!used.insert(d).second)
        result.push_back(fmt::format("stage {}: device {} already holds another stage", s, d));
    }
    if (micro_batches >= 1 && global_batch % micro_batches == 0 &&
        micro_batch_size() < static_cast<int>(stage.devices.size()))
      result.push_back(fmt::format("stage {} has {} replicas but a micro-batch has only {} samples", s,
                                   stage.devices.size(), micro_batch_size()));
  }
  std::size_t next = 0;
  for (const LayerRange& range : virtual_stages()) {
    if (range.begin != next || range.end <= range.begin) {
      result.push_back(
          fmt::format("the stages must cover the layers in order without gaps: expected a chunk "
                      "starting at layer {}, got [{}, {})",
                      next, range.begin, range.end));
      return result;
    }
    next = range.end;
  }
  if (next != layer_count)
    result.push_back(fmt::format("the stages cover layers [0, {}) but the model has {} layers", next, layer_count));
  return result;
}

std::string PipelinePlan::describe(const DeviceNames& device_names) const {
  std::vector<std::string> parts;
  for (const PipelineStage& stage : stages) {
    std::vector<std::string> chunks;
    for (const LayerRange& r : stage.chunks) chunks.push_back(fmt::format("[{},{})", r.begin, r.end));
    const std::string names = describe_devices(stage.devices, device_names);
    parts.push_back(fmt::format("{}×{} @ {}", fmt::join(chunks, "+"), stage.devices.size(), names));
  }
  return fmt::format("{}: {}, M = {} × {}", counted(stages.size(), "stage"), fmt::join(parts, " | "), micro_batches,
                     micro_batch_size());
}

std::string describe_devices(const std::vector<DeviceId>& devices, const DeviceNames& device_names) {
  std::vector<std::string> runs;
  for (std::size_t i = 0; i < devices.size();) {
    std::size_t j = i;
    while (j + 1 < devices.size() && devices[j + 1] == devices[j] + 1) ++j;
    runs.push_back(device_names.range(devices[i], devices[j]));
    i = j + 1;
  }
  return fmt::format("{}", fmt::join(runs, ","));
}

SampleShare replica_share(int micro_batch_size, int replicas, int replica) {
  const int base = micro_batch_size / replicas;
  const int extra = micro_batch_size % replicas;
  return SampleShare{replica * base + std::min(replica, extra), base + (replica < extra ? 1 : 0)};
}

}  // namespace dnnsim
