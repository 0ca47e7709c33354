#include "planners/data_parallel/data_parallel.hpp"

#include <fmt/format.h>

#include "planners/common/layer_cost.hpp"

namespace dnnsim {

std::vector<LayerRange> gradient_buckets(const LayerModel& model, Bytes bucket_size, LayerRange layers) {
  std::vector<LayerRange> buckets;
  std::size_t top = layers.end;  // one past the highest layer of the open bucket
  Bytes filled{0};
  for (std::size_t i = layers.end; i-- > layers.begin;) {
    filled += model.layers[i].parameter_bytes;
    if (filled >= bucket_size) {
      buckets.push_back(LayerRange{i, top});
      top = i;
      filled = Bytes(0);
    }
  }
  if (top > layers.begin) buckets.push_back(LayerRange{layers.begin, top});
  return buckets;
}

std::vector<LayerRange> gradient_buckets(const LayerModel& model, Bytes bucket_size) {
  return gradient_buckets(model, bucket_size, LayerRange{0, model.layers.size()});
}

namespace {

Bytes bucket_bytes(const LayerModel& model, LayerRange bucket) {
  Bytes total{0};
  for (std::size_t layer = bucket.begin; layer < bucket.end; ++layer) total += model.layers[layer].parameter_bytes;
  return total;
}

}  // namespace

TaskGraph build_data_parallel(const DataParallelConfig& config, const std::vector<std::string>& devices,
                              int iterations) {
  TaskGraph graph;
  for (const std::string& device : devices) graph.add_device(device);
  const StreamId compute_stream = graph.add_stream("compute");
  const StreamId comm_stream = graph.add_stream("comm");
  const auto device_count = static_cast<int>(devices.size());
  const LayerModel& model = config.model;
  const std::size_t layer_count = model.layers.size();
  const auto buckets = gradient_buckets(model, config.bucket_size);
  // Layer::parameter_bytes counts 4-byte parameters (as the profiles do); the precision and optimizer
  // decide what each parameter costs in memory and what the all-reduce moves.
  const double parameter_count = model.parameter_bytes().value() / kProfileBytesPerParameter;
  const BytesPerParameter per_parameter = bytes_per_parameter(config.precision, config.optimizer);
  const double gradient_scale = per_parameter.gradients / kProfileBytesPerParameter;

  // The devices that get tasks: all, or the window (the others mirror it).
  const auto simulated = static_cast<DeviceId>(config.replica_window > 0 ? config.replica_window : device_count);
  for (DeviceId d = simulated; d < devices.size(); ++d) graph.set_mirror(d, d % simulated);
  std::vector<DeviceId> everyone(simulated);
  for (DeviceId d = 0; d < everyone.size(); ++d) everyone[d] = d;

  for (int iteration = 0; iteration < iterations; ++iteration) {
    const auto on_compute_stream = [&](Compute compute, Phase phase, std::string label) {
      Task task{std::move(compute)};
      task.stream = compute_stream;
      task.phase = phase;
      task.iteration = static_cast<std::uint32_t>(iteration);
      task.label = std::move(label);
      return task;
    };
    // backward_task[device][layer]
    std::vector<std::vector<TaskId>> backward_task(simulated, std::vector<TaskId>(layer_count));
    for (DeviceId d = 0; d < simulated; ++d) {
      const int batch = config.global_batch / device_count + (static_cast<int>(d) < config.global_batch % device_count);
      for (std::size_t l = 0; l < layer_count; ++l) {
        const Layer& layer = model.layers[l];
        Task task = on_compute_stream(layer_compute(model, layer, d, batch, config.dtype, Pass::forward),
                                      Phase::forward, fmt::format("fwd {}", layer.name));
        task.alloc_bytes = layer.activation_bytes * batch;
        if (iteration == 0 && l == 0) task.alloc_bytes += Bytes(parameter_count * per_parameter.total());
        graph.add(std::move(task));
      }
      for (std::size_t l = layer_count; l-- > 0;) {
        const Layer& layer = model.layers[l];
        Task task = on_compute_stream(layer_compute(model, layer, d, batch, config.dtype, Pass::backward),
                                      Phase::backward, fmt::format("bwd {}", layer.name));
        task.free_bytes = layer.activation_bytes * batch;
        backward_task[d][l] = graph.add(std::move(task));
      }
    }

    std::optional<TaskId> last_all_reduce;
    if (device_count > 1) {
      for (std::size_t b = 0; b < buckets.size(); ++b) {
        const Bytes size = bucket_bytes(model, buckets[b]) * gradient_scale;
        if (size.value() <= 0) continue;
        // The bucket is ready when its lowest layer's backward is done (with overlap), or when the
        // whole backward pass is (without).
        const std::size_t ready_layer = config.overlap ? buckets[b].begin : 0;
        Collective all_reduce{CollectiveKind::all_reduce, everyone, size, config.collective_algorithm, 0};
        all_reduce.copies = static_cast<std::uint32_t>(devices.size() / simulated);
        Task task{std::move(all_reduce)};
        task.stream = comm_stream;
        task.phase = Phase::communication;
        task.iteration = static_cast<std::uint32_t>(iteration);
        task.label = fmt::format("all-reduce bucket {}", b);
        for (DeviceId d = 0; d < simulated; ++d) task.deps.push_back(backward_task[d][ready_layer]);
        last_all_reduce = graph.add(std::move(task));
      }
    }

    for (DeviceId d = 0; d < simulated; ++d) {
      Task task =
          on_compute_stream(optimizer_step(parameter_count, per_parameter, d), Phase::optimizer, "optimizer step");
      if (last_all_reduce) task.deps.push_back(*last_all_reduce);
      graph.add(std::move(task));
    }
  }
  return graph;
}

}  // namespace dnnsim
