#include "sim/report/metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <regex>
#include <set>

#include "models/common/parse_number.hpp"

namespace dnnsim {
namespace {

// "fwd s0 mb3" → "s0": the label without its pass word and micro-batch (a million tasks: no regex).
std::string breakdown_row(std::string_view label) {
  for (std::string_view pass : {"fwd ", "bwd ", "recompute ", "wgrad "})
    if (label.substr(0, pass.size()) == pass) {
      label.remove_prefix(pass.size());
      break;
    }
  const auto mb = label.rfind(" mb");
  if (mb != std::string_view::npos && mb + 3 < label.size() &&
      std::all_of(label.begin() + static_cast<std::ptrdiff_t>(mb + 3), label.end(),
                  [](char c) { return c >= '0' && c <= '9'; }))
    label = label.substr(0, mb);
  return std::string(label);
}

}  // namespace

double FlopMetrics::mfu(double makespan_s) const {
  return makespan_s > 0 && peak_flops_per_s > 0 ? model_flops / (makespan_s * peak_flops_per_s) : 0.0;
}

double FlopMetrics::hfu(double makespan_s) const {
  return makespan_s > 0 && peak_flops_per_s > 0 ? hardware_flops / (makespan_s * peak_flops_per_s) : 0.0;
}

std::vector<DeviceId> mirror_sources(const TaskGraph& graph) {
  std::vector<DeviceId> source(graph.devices().size());
  std::iota(source.begin(), source.end(), DeviceId{0});
  for (const auto& [copy, original] : graph.mirrors()) source[copy] = original;
  for (const Task& task : graph.tasks())
    if (const auto* collective = std::get_if<Collective>(&task.op); collective && collective->mirrored)
      for (std::size_t m = 1; m < collective->group.size(); ++m)
        source[collective->group[m]] = collective->group.front();
  // A replica outside a data-parallel window mirrors a window replica's rank, which may mirror its
  // group's rank 0 in turn: follow each chain to a simulated device (bounded: a malformed graph's
  // cycle stops after one pass).
  for (DeviceId& s : source)
    for (std::size_t hops = 0; source[s] != s && hops < source.size(); ++hops) s = source[s];
  return source;
}

std::vector<GpuSpec> gpu_specs_of_devices(const std::vector<std::optional<ClusterGpu>>& located) {
  std::vector<GpuSpec> specs;
  for (const std::optional<ClusterGpu>& gpu : located) specs.push_back(gpu ? gpu->type->gpu : GpuSpec{});
  return specs;
}

FlopMetrics flop_metrics(const SimulationResult& result, const std::vector<GpuSpec>& gpus,
                         const std::vector<DeviceId>& sources) {
  const TaskGraph& graph = result.graph;
  FlopMetrics metrics;
  metrics.devices.resize(graph.devices().size());
  // FLOPs per device and dtype, to pick each device's peak (the dtype that carries most of its work).
  std::vector<std::array<double, kDtypeCount>> by_dtype(graph.devices().size(), std::array<double, kDtypeCount>{});
  std::array<double, kDtypeCount> overall{};
  for (TaskId id = 0; id < graph.tasks().size(); ++id) {
    const auto* compute = std::get_if<Compute>(&graph.task(id).op);
    if (compute == nullptr || !happened(result.task_end[id])) continue;
    const Phase phase = graph.task(id).phase;
    if (phase == Phase::optimizer) continue;
    const double flops = compute->flops.value();
    DeviceFlops& device = metrics.devices[compute->device];
    device.hardware_flops += flops;
    if (phase != Phase::recompute) device.model_flops += flops;
    by_dtype[compute->device][static_cast<std::size_t>(compute->dtype)] += flops;
    overall[static_cast<std::size_t>(compute->dtype)] += flops;
  }
  const auto dominant = [](const std::array<double, kDtypeCount>& flops) {
    return static_cast<Dtype>(std::max_element(flops.begin(), flops.end()) - flops.begin());
  };
  for (DeviceId d = 0; d < graph.devices().size(); ++d) {
    if (sources[d] != d) {
      metrics.devices[d] = metrics.devices[sources[d]];
      by_dtype[d] = by_dtype[sources[d]];
    }
    const bool computes = *std::max_element(by_dtype[d].begin(), by_dtype[d].end()) > 0;
    const Dtype dtype = dominant(computes ? by_dtype[d] : overall);
    const std::optional<FlopsPerSecond> peak = d < gpus.size() ? gpus[d].peak(dtype) : std::nullopt;
    DeviceFlops& device = metrics.devices[d];
    device.peak_flops_per_s = peak ? peak->value() : 0.0;
    metrics.model_flops += device.model_flops;
    metrics.hardware_flops += device.hardware_flops;
    metrics.peak_flops_per_s += device.peak_flops_per_s;
  }
  return metrics;
}

nlohmann::ordered_json memory_at_peak(double peak_bytes, const MemoryBreakdown* states) {
  nlohmann::ordered_json memory;
  const double weights = states ? states->weights.value() : 0.0;
  const double gradients = states ? states->gradients.value() : 0.0;
  const double optimizer = states ? states->optimizer_state.value() : 0.0;
  const double stashed = states ? states->stashed_weights.value() : 0.0;
  // Model states (and stashed weight versions) are taken by the first task and kept, so at the peak
  // they are all there; the rest of the peak is activations for a layer model, and uncategorised for
  // a task-graph file.
  const double rest = std::max(0.0, peak_bytes - weights - stashed - gradients - optimizer);
  memory["weights_bytes"] = weights;
  memory["stashed_weights_bytes"] = stashed;
  memory["gradients_bytes"] = gradients;
  memory["optimizer_state_bytes"] = optimizer;
  memory["activations_bytes"] = states ? rest : 0.0;
  memory["other_bytes"] = states ? 0.0 : rest;
  return memory;
}

std::string format_time_breakdown(const SimulationResult& result) {
  const TaskGraph& graph = result.graph;
  // Columns: the compute phases, then communication (transfers and collectives).
  static constexpr std::array kColumns{Phase::forward,   Phase::backward, Phase::weight_grad,  Phase::recompute,
                                       Phase::optimizer, Phase::other,    Phase::communication};
  std::vector<std::string> order;
  std::map<std::string, std::array<double, kColumns.size()>> seconds;
  for (TaskId id = 0; id < graph.tasks().size(); ++id) {
    if (!happened(result.task_start[id]) || !happened(result.task_end[id])) continue;
    const Task& task = graph.task(id);
    const std::string row = breakdown_row(task.label);
    const Phase phase = task.is_compute() ? task.phase : Phase::communication;
    const auto column = static_cast<std::size_t>(std::find(kColumns.begin(), kColumns.end(), phase) - kColumns.begin());
    auto [it, added] = seconds.try_emplace(row, std::array<double, kColumns.size()>{});
    if (added) order.push_back(row);
    // A collective occupies each member for its duration (a mirrored one its simulated member: the
    // mean below is over simulated devices); a transfer its source and destination.
    const double occupied =
        task.is_compute() ? 1.0 : static_cast<double>(task.is_transfer() ? 2 : task.devices().size());
    it->second[column] += (result.task_end[id] - result.task_start[id]) * occupied;
  }
  const std::vector<DeviceId> source = mirror_sources(graph);
  std::size_t simulated = 0;
  for (DeviceId d = 0; d < source.size(); ++d) simulated += source[d] == d ? 1 : 0;
  const double per =
      static_cast<double>(std::max<std::size_t>(1, simulated)) * std::max<std::uint32_t>(1, graph.iteration_count());
  std::array<double, kColumns.size()> totals{};
  double compute_total = 0;
  for (const auto& [row, values] : seconds)
    for (std::size_t c = 0; c < kColumns.size(); ++c) {
      totals[c] += values[c];
      if (c + 1 < kColumns.size()) compute_total += values[c];
    }
  std::string text =
      "\ntime per device and iteration, mean over devices (comm: from a collective's first member to its end, "
      "waiting included; share: of compute time)\n";
  std::size_t width = 16;
  for (const std::string& row : order) width = std::max(width, std::min<std::size_t>(row.size(), 40));
  text += fmt::format("{:<{}}", "layer / stage", width);
  for (std::size_t c = 0; c < kColumns.size(); ++c)
    if (totals[c] > 0) text += fmt::format(" {:>11}", c + 1 == kColumns.size() ? "comm" : phase_name(kColumns[c]));
  text += fmt::format(" {:>6}\n", "share");
  const auto line = [&](const std::string& name, const std::array<double, kColumns.size()>& values) {
    double compute = 0;
    std::string out = fmt::format("{:<{}}", name.size() > width ? name.substr(0, width - 1) + "…" : name, width);
    for (std::size_t c = 0; c < kColumns.size(); ++c) {
      if (totals[c] <= 0) continue;
      if (c + 1 < kColumns.size()) compute += values[c];
      out += fmt::format(" {:>11}", values[c] > 0 ? format_seconds(Seconds(values[c] / per)) : "-");
    }
    return out + fmt::format(" {:>5.1f}%\n", compute_total > 0 ? 100 * compute / compute_total : 0.0);
  };
  for (const std::string& row : order) text += line(row, seconds[row]);
  text += line("total", totals);
  return text;
}

std::string compress_device_names(const std::vector<std::string>& names) {
  if (names.size() == 1) return names.front();
  // Integer ranges "0–3,8–11" of a sorted set.
  const auto ranges = [](const std::set<long>& values) {
    std::vector<std::string> parts;
    for (auto it = values.begin(); it != values.end();) {
      long first = *it, last = *it;
      while (++it != values.end() && *it == last + 1) last = *it;
      parts.push_back(first == last ? std::to_string(first) : fmt::format("{}–{}", first, last));
    }
    return fmt::format("{}", fmt::join(parts, ","));
  };
  static const std::regex kShape("^([^0-9/]*)([0-9]+)/([^0-9/]*)([0-9]+)$");
  std::string node_prefix, gpu_prefix;
  std::set<long> nodes, gpus;
  std::set<std::pair<long, long>> pairs;
  bool regular = true;
  for (const std::string& name : names) {
    std::smatch m;
    if (!std::regex_match(name, m, kShape) || (!pairs.empty() && (m[1] != node_prefix || m[3] != gpu_prefix))) {
      regular = false;
      break;
    }
    node_prefix = m[1];
    gpu_prefix = m[3];
    // Up to 20 digits match the pattern; a number beyond long is no range to compress.
    const auto node = parse_number<long>(m[2].str()), gpu = parse_number<long>(m[4].str());
    if (!node || !gpu) {
      regular = false;
      break;
    }
    nodes.insert(*node);
    gpus.insert(*gpu);
    pairs.insert({*node, *gpu});
  }
  if (!regular || pairs.size() != nodes.size() * gpus.size()) return names.front() + ", …";
  return node_prefix + ranges(nodes) + "/" + gpu_prefix + ranges(gpus);
}

}  // namespace dnnsim
