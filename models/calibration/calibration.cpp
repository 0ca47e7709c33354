#include "models/calibration/calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <set>
#include <stdexcept>
#include <tuple>

#include "models/calibration/cpu_backend.hpp"
#include "models/common/yaml_reader.hpp"

namespace dnnsim {

double EfficiencyCurve::at(double size) const {
  if (points.empty()) return 1.0;
  if (size <= points.front().first) return points.front().second;
  if (size >= points.back().first) return points.back().second;
  // First point strictly above `size`; the segment is [upper - 1, upper].
  auto upper =
      std::upper_bound(points.begin(), points.end(), size,
                       [](double value, const std::pair<double, double>& point) { return value < point.first; });
  const auto& [x0, y0] = *(upper - 1);
  const auto& [x1, y1] = *upper;
  const double t = (std::log(size) - std::log(x0)) / (std::log(x1) - std::log(x0));
  return y0 + t * (y1 - y0);
}

namespace {

// Where `x` falls on `axis` for multilinear interpolation in log space: the lower index and the
// weight of the next one (0 at or beyond the ends, which clamp).
std::pair<std::size_t, double> locate(const std::vector<double>& axis, double x) {
  if (axis.size() < 2 || x <= axis.front()) return {0, 0.0};
  if (x >= axis.back()) return {axis.size() - 1, 0.0};
  const auto upper = static_cast<std::size_t>(std::upper_bound(axis.begin(), axis.end(), x) - axis.begin());
  const double t = (std::log(x) - std::log(axis[upper - 1])) / (std::log(axis[upper]) - std::log(axis[upper - 1]));
  return {upper - 1, t};
}

}  // namespace

double GemmEfficiencyGrid::at(double m_size, double n_size, double k_size) const {
  if (efficiency.empty()) return 1.0;
  const auto interpolated = [&](double m_at, double n_at, double k_at) {
    const auto [i, ti] = locate(m, m_at);
    const auto [j, tj] = locate(n, n_at);
    const auto [l, tl] = locate(k, k_at);
    double result = 0;
    for (int di = 0; di < 2; ++di)
      for (int dj = 0; dj < 2; ++dj)
        for (int dl = 0; dl < 2; ++dl) {
          const double weight = (di ? ti : 1 - ti) * (dj ? tj : 1 - tj) * (dl ? tl : 1 - tl);
          if (weight == 0) continue;
          result += weight * efficiency[((i + di) * n.size() + j + dj) * k.size() + l + dl];
        }
    return result;
  };
  // Below an axis' first point the efficiency follows the power law of the grid's first cell on that
  // axis, e ∝ size^α, with α clamped to [0, 1]: a smaller GEMM is never more efficient (α ≥ 0) and
  // never slower (α ≤ 1). Checked on XLA's own table (fit_calibration.py check, "below a cut grid"):
  // shapes one and two octaves below a shortened grid, predicted this way, err 9.6–13.3% in time on the
  // H100 and B200 BF16 and B200 FP8 grids against 12.1–17.8% with the efficiency held constant, which
  // ran them 11–17% too fast (17.6% against 15.9% on the H100 FP8 grid, derived from the others).
  const double m_at = std::max(m_size, m.front()), n_at = std::max(n_size, n.front()),
               k_at = std::max(k_size, k.front());
  const double edge = interpolated(m_at, n_at, k_at);
  double result = edge;
  const auto below = [&](const std::vector<double>& axis, double size, double m_next, double n_next, double k_next) {
    if (axis.size() < 2 || size >= axis.front() || edge <= 0) return;
    const double slope = std::log(interpolated(m_next, n_next, k_next) / edge) / std::log(axis[1] / axis[0]);
    result *= std::pow(size / axis.front(), std::clamp(slope, 0.0, 1.0));
  };
  below(m, m_size, m.size() >= 2 ? m[1] : m_at, n_at, k_at);
  below(n, n_size, m_at, n.size() >= 2 ? n[1] : n_at, k_at);
  below(k, k_size, m_at, n_at, k.size() >= 2 ? k[1] : k_at);
  return result;
}

std::vector<std::string> calibration_copy_names() {
  return {"host_to_device", "device_to_host", "device_to_device", "peer"};
}

// ---------------------------------------------------------------------------------------------
// Reading

namespace {

// The grid of `points` ((m, n, k) → efficiency), or nullopt with `why` when they do not cover every
// combination of the m, n and k values they use.
std::optional<GemmEfficiencyGrid> gemm_grid(const std::map<std::tuple<double, double, double>, double>& points,
                                            std::string& why) {
  std::set<double> m, n, k;
  for (const auto& [shape, efficiency] : points) {
    m.insert(std::get<0>(shape));
    n.insert(std::get<1>(shape));
    k.insert(std::get<2>(shape));
  }
  GemmEfficiencyGrid grid{{m.begin(), m.end()}, {n.begin(), n.end()}, {k.begin(), k.end()}, {}};
  for (double a : grid.m)
    for (double b : grid.n)
      for (double c : grid.k) {
        const auto it = points.find({a, b, c});
        if (it == points.end()) {
          why = fmt::format(
              "the points are not a full grid: {} m × {} n × {} k values need {} points, and m = {}, "
              "n = {}, k = {} is missing",
              m.size(), n.size(), k.size(), m.size() * n.size() * k.size(), a, b, c);
          return std::nullopt;
        }
        grid.efficiency.push_back(it->second);
      }
  return grid;
}

// The layouts a grid is measured for: every GemmOp but the backward pairs, which are two of them.
std::vector<std::string> gemm_layout_names() {
  std::vector<std::string> names;
  for (const std::string& name : gemm_op_names())
    if (!is_backward_pair(*gemm_op_from_name(name))) names.push_back(name);
  return names;
}

// What the points of a curve hold: an efficiency in (0, 1] (compute, memory) or a rate (copies).
enum class CurveValue { efficiency, bandwidth };

class TableReader {
 public:
  TableReader(const std::string& path, DiagnosticSink& sink) : reader_(path, sink) {}

  CalibrationTable read() {
    CalibrationTable table;
    YAML::Node root = reader_.load_file();
    if (!reader_.sink().empty()) return table;
    MapReader top(reader_, root, "the calibration table");
    if (!top.valid()) return table;
    if (auto device = top.string("device", true)) {
      if (device->empty()) reader_.error(top.get("device"), "the device name must not be empty");
      table.device = *device;
    }
    if (auto source = top.string("source", true)) table.source = *source;
    read_peaks(top.require("peak"), table);
    if (auto bandwidth = top.positive_quantity<BytesPerSecond>("memory_bandwidth", true))
      table.memory_bandwidth = *bandwidth;
    if (auto sustained = top.number("sustained_compute", 0.01, 1.0)) table.sustained_compute = *sustained;
    if (YAML::Node compute = top.get("compute"); compute.IsDefined()) read_compute(compute, table);
    if (YAML::Node gemm = top.get("gemm"); gemm.IsDefined()) read_gemm(gemm, table);
    if (YAML::Node memory = top.get("memory"); memory.IsDefined())
      table.memory = read_curve(memory, Dimension::bytes, CurveValue::efficiency, "memory points");
    if (YAML::Node copies = top.get("copies"); copies.IsDefined()) {
      MapReader map(reader_, copies, "copies");
      for (const std::string& name : calibration_copy_names())
        if (YAML::Node curve = map.get(name); curve.IsDefined())
          table.copies[name] = read_curve(curve, Dimension::bytes, CurveValue::bandwidth, "copy points");
      map.finish();
    }
    if (YAML::Node collectives = top.get("collectives"); collectives.IsDefined()) {
      MapReader map(reader_, collectives, "collectives");
      CollectiveCalibration calibration;
      if (auto latency = map.quantity<Seconds>("latency", true)) {
        if (latency->value() < 0) reader_.error(map.get("latency"), "the collective latency must not be negative");
        calibration.latency = *latency;
      }
      if (auto efficiency = map.number("link_efficiency", 0.001, 1.0, true)) calibration.link_efficiency = *efficiency;
      if (auto share = map.number("compute_share", 0.0, 0.49)) calibration.compute_share = *share;
      map.finish();
      table.collectives = calibration;
    }
    if (YAML::Node launch = top.get("launch"); launch.IsDefined()) {
      MapReader map(reader_, launch, "launch");
      LaunchCalibration calibration;
      if (auto overhead = map.quantity<Seconds>("host_overhead", true)) {
        if (overhead->value() <= 0)
          reader_.error(map.get("host_overhead"), "the host overhead per kernel must be positive");
        calibration.host_overhead = *overhead;
      }
      map.finish();
      table.launch = calibration;
    }
    top.finish();
    return table;
  }

 private:
  void read_peaks(const YAML::Node& node, CalibrationTable& table) {
    if (!node.IsDefined()) return;
    MapReader map(reader_, node, "peak");
    for (const std::string& name : dtype_names()) {
      YAML::Node value = map.get(name);
      if (!value.IsDefined()) continue;
      auto rate = reader_.quantity<FlopsPerSecond>(value);
      if (!rate) continue;
      if (rate->value() <= 0) {
        reader_.error(value, fmt::format("the {} peak must be positive", name));
        continue;
      }
      table.peak[*dtype_from_name(name)] = *rate;
    }
    map.finish();
  }

  void read_compute(const YAML::Node& node, CalibrationTable& table) {
    for (const YAML::Node& entry : reader_.list(node, "compute curves")) {
      MapReader map(reader_, entry, "a compute curve");
      if (!map.valid()) continue;
      auto kind = map.choice("kind", "layer kind", layer_kind_names(), true);
      auto dtype = map.choice("dtype", "dtype", dtype_names(), true);
      // `pass: backward`: the curve of the kind's backward tasks only; `all` (the default): every task's.
      const std::optional<std::string> pass = map.choice("pass", "pass", {"all", "backward"}, false);
      // `mask: none`: the curve of the kind's forward calls without a mask (unmasked_compute); `causal`
      // (the default): the curve of every call.
      const std::optional<std::string> mask = map.choice("mask", "mask", {"causal", "none"}, false);
      YAML::Node points = map.require("curve");
      EfficiencyCurve curve;
      if (points.IsDefined()) curve = read_curve(points, Dimension::flop, CurveValue::efficiency, "curve points");
      const bool backward = pass == "backward";
      const bool unmasked = mask == "none";
      if (backward && unmasked)
        reader_.error(map.get("mask"),
                      "mask: none is read by forward curves only (a backward curve serves every mask)");
      map.finish();
      // A refused or misspelt pass or mask names no curve: not judged again as a second curve of the
      // default one.
      if (!kind || !dtype || (backward && unmasked) || map.refused("pass") || map.refused("mask")) continue;
      const auto key = std::make_pair(*kind, *dtype_from_name(*dtype));
      auto& curves = backward ? table.backward_compute : unmasked ? table.unmasked_compute : table.compute;
      if (curves.contains(key)) {
        reader_.error(entry, fmt::format("a second {}curve for kind '{}' and dtype '{}'",
                                         backward   ? "backward "
                                         : unmasked ? "unmasked "
                                                    : "",
                                         *kind, *dtype));
        continue;
      }
      curves.emplace(key, std::move(curve));
    }
  }

  // Shape grids: [{dtype, layout, points: [{m, n, k, efficiency}, …]}, …], each a full m × n × k
  // grid; layout nn when not given.
  void read_gemm(const YAML::Node& node, CalibrationTable& table) {
    for (const YAML::Node& entry : reader_.list(node, "GEMM shape grids")) {
      MapReader map(reader_, entry, "a GEMM shape grid");
      if (!map.valid()) continue;
      auto dtype = map.choice("dtype", "dtype", dtype_names(), true);
      const std::vector<std::string> layouts = gemm_layout_names();
      const std::optional<std::string> layout = map.choice("layout", "GEMM layout", layouts, false);
      YAML::Node points = map.require("points");
      map.finish();
      if (!points.IsDefined()) continue;
      std::map<std::tuple<double, double, double>, double> measured;
      bool complete = true;
      for (const YAML::Node& point : reader_.list(points, "GEMM shape points")) {
        MapReader fields(reader_, point, "a GEMM shape point");
        if (!fields.valid()) {
          complete = false;
          continue;
        }
        std::optional<double> dims[3];
        const char* names[3] = {"m", "n", "k"};
        for (int d = 0; d < 3; ++d) {
          YAML::Node dim = fields.require(names[d]);
          if (!dim.IsDefined()) continue;
          dims[d] = reader_.number(dim, 1.0, 4294967295.0);
          if (dims[d] && *dims[d] != std::floor(*dims[d])) {
            reader_.error(dim, fmt::format("{} must be a whole number, got {}", names[d], *dims[d]));
            dims[d].reset();
          }
        }
        const std::optional<double> e = positive(fields.require("efficiency"), std::nullopt, "an efficiency");
        fields.finish();
        if (!dims[0] || !dims[1] || !dims[2] || !e) {
          complete = false;
          continue;
        }
        if (!measured.emplace(std::make_tuple(*dims[0], *dims[1], *dims[2]), *e).second) {
          reader_.error(point, fmt::format("a second point for m = {}, n = {}, k = {}", *dims[0], *dims[1], *dims[2]));
          complete = false;
        }
      }
      if (!dtype || !complete || (map.has("layout") && !layout)) continue;
      const std::pair key{*dtype_from_name(*dtype), *gemm_op_from_name(layout.value_or("nn"))};
      if (table.gemm.contains(key)) {
        reader_.error(entry, fmt::format("a second GEMM shape grid for dtype '{}' and layout '{}'", *dtype,
                                         gemm_op_name(key.second)));
        continue;
      }
      std::string why;
      std::optional<GemmEfficiencyGrid> grid = gemm_grid(measured, why);
      if (!grid) {
        reader_.error(points, why);
        continue;
      }
      table.gemm.emplace(key, std::move(*grid));
    }
  }

  // Points {size, efficiency} or {size, bandwidth}; sizes in `size_dimension` (FLOPs or bytes).
  EfficiencyCurve read_curve(const YAML::Node& node, Dimension size_dimension, CurveValue value,
                             std::string_view what) {
    EfficiencyCurve curve;
    const std::vector<YAML::Node> points = reader_.list(node, what);
    if (node.IsSequence() && points.empty()) reader_.error(node, "a curve needs at least one point");
    for (const YAML::Node& point : points) {
      MapReader map(reader_, point, "a curve point");
      if (!map.valid()) continue;
      std::optional<double> size;
      YAML::Node size_node = map.require("size");
      if (size_node.IsDefined()) size = reader_.quantity(size_node, size_dimension);
      const std::optional<double> y =
          value == CurveValue::efficiency
              ? positive(map.require("efficiency"), std::nullopt, "an efficiency")
              : positive(map.require("bandwidth"), Dimension::bandwidth, "a copy bandwidth");
      map.finish();
      if (!size || !y) continue;
      if (*size <= 0) {
        reader_.error(size_node, "a curve point's size must be positive");
        continue;
      }
      if (!curve.points.empty() && *size <= curve.points.back().first) {
        reader_.error(size_node, "curve sizes must be strictly increasing");
        continue;
      }
      curve.points.emplace_back(*size, *y);
    }
    return curve;
  }

  // A number in (0, 1] (dimension nullopt) or a positive quantity; nullopt when absent or wrong.
  std::optional<double> positive(const YAML::Node& node, std::optional<Dimension> dimension, std::string_view what) {
    if (!node.IsDefined()) return std::nullopt;
    const std::optional<double> value = dimension ? reader_.quantity(node, *dimension) : reader_.number(node, 0.0, 1.0);
    if (!value || *value > 0) return value;
    reader_.error(node, fmt::format("{} must be {}, got 0", what, dimension ? "positive" : "in (0, 1]"));
    return std::nullopt;
  }

  YamlReader reader_;
};

}  // namespace

CalibrationTable load_calibration(const std::string& path) {
  DiagnosticSink sink;
  TableReader reader(path, sink);
  CalibrationTable table = reader.read();
  sink.throw_if_any();
  return table;
}

// ---------------------------------------------------------------------------------------------
// Writing: six significant digits in the largest unit that keeps the number >= 1, so that tables
// read well and dump(load(dump(t))) == dump(t).

namespace {

std::string with_unit(double value, std::initializer_list<std::pair<double, std::string_view>> units) {
  for (const auto& [factor, symbol] : units)
    if (value >= factor) return fmt::format("\"{:.6g}{}\"", value / factor, symbol);
  return fmt::format("\"{:.6g}{}\"", value, (units.end() - 1)->second);
}

std::string flop_text(double flop) {
  return with_unit(flop, {{1e12, "TFlop"}, {1e9, "GFlop"}, {1e6, "MFlop"}, {1e3, "kFlop"}, {0, "Flop"}});
}
std::string flop_rate_text(double rate) {
  return with_unit(rate, {{1e15, "PFlops"}, {1e12, "TFlops"}, {1e9, "GFlops"}, {1e6, "MFlops"}, {0, "Flops"}});
}
std::string bytes_text(double bytes) {
  return with_unit(bytes, {{1073741824.0, "GiB"}, {1048576.0, "MiB"}, {1024.0, "KiB"}, {0, "B"}});
}
std::string bandwidth_text(double rate) {
  return with_unit(rate, {{1e12, "TB/s"}, {1e9, "GB/s"}, {1e6, "MB/s"}, {1e3, "KB/s"}, {0, "B/s"}});
}

// A YAML double-quoted scalar.
std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  return out + "\"";
}

void dump_points(std::string& out, const EfficiencyCurve& curve, std::string_view indent, bool is_flop) {
  for (const auto& [size, efficiency] : curve.points)
    out += fmt::format("{}- {{size: {}, efficiency: {:.6g}}}\n", indent, is_flop ? flop_text(size) : bytes_text(size),
                       efficiency);
}

}  // namespace

CollectiveCalibration collectives_of(const CalibrationTable* table) {
  return table && table->collectives ? *table->collectives : CollectiveCalibration{};
}

std::string dump_calibration(const CalibrationTable& table) {
  std::string out = "# dnnsim calibration table (format: docs/calibration.md)\n";
  out += fmt::format("device: {}\n", quoted(table.device));
  out += fmt::format("source: {}\n", quoted(table.source));
  out += "peak: {";
  bool first = true;
  for (const auto& [dtype, rate] : table.peak) {  // std::map: dtype order, deterministic
    out += fmt::format("{}{}: {}", first ? "" : ", ", dtype_name(dtype), flop_rate_text(rate.value()));
    first = false;
  }
  out += "}\n";
  out += fmt::format("memory_bandwidth: {}\n", bandwidth_text(table.memory_bandwidth.value()));
  if (table.sustained_compute != 1.0) out += fmt::format("sustained_compute: {:.6g}\n", table.sustained_compute);
  out += table.compute.empty() && table.backward_compute.empty() && table.unmasked_compute.empty() ? "compute: []\n"
                                                                                                   : "compute:\n";
  for (const auto& [key, curve] : table.compute) {
    out += fmt::format("  - kind: {}\n    dtype: {}\n    curve:\n", key.first, dtype_name(key.second));
    dump_points(out, curve, "      ", true);
  }
  for (const auto& [key, curve] : table.backward_compute) {
    out +=
        fmt::format("  - kind: {}\n    dtype: {}\n    pass: backward\n    curve:\n", key.first, dtype_name(key.second));
    dump_points(out, curve, "      ", true);
  }
  for (const auto& [key, curve] : table.unmasked_compute) {
    out += fmt::format("  - kind: {}\n    dtype: {}\n    mask: none\n    curve:\n", key.first, dtype_name(key.second));
    dump_points(out, curve, "      ", true);
  }
  if (!table.gemm.empty()) out += "gemm:\n";
  for (const auto& [key, grid] : table.gemm) {
    out += fmt::format("  - dtype: {}\n", dtype_name(key.first));
    if (key.second != GemmOp::nn) out += fmt::format("    layout: {}\n", gemm_op_name(key.second));  // nn: the default
    out += "    points:\n";
    std::size_t index = 0;
    for (double m : grid.m)
      for (double n : grid.n)
        for (double k : grid.k)
          out +=
              fmt::format("      - {{m: {}, n: {}, k: {}, efficiency: {:.6g}}}\n", m, n, k, grid.efficiency[index++]);
  }
  // `memory` is optional, and a curve needs points: a table without one has no section.
  if (!table.memory.points.empty()) out += "memory:\n";
  dump_points(out, table.memory, "  ", false);
  out += table.copies.empty() ? "copies: {}\n" : "copies:\n";
  for (const std::string& name : calibration_copy_names()) {
    auto it = table.copies.find(name);
    if (it == table.copies.end()) continue;
    out += fmt::format("  {}:\n", name);
    for (const auto& [size, rate] : it->second.points)
      out += fmt::format("    - {{size: {}, bandwidth: {}}}\n", bytes_text(size), bandwidth_text(rate));
  }
  if (table.collectives) {
    out += fmt::format("collectives: {{latency: \"{:.6g}us\", link_efficiency: {:.6g}",
                       table.collectives->latency.value() * 1e6, table.collectives->link_efficiency);
    if (table.collectives->compute_share > 0)
      out += fmt::format(", compute_share: {:.6g}", table.collectives->compute_share);
    out += "}\n";
  }
  if (table.launch)
    out += fmt::format("launch: {{host_overhead: \"{:.6g}us\"}}\n", table.launch->host_overhead.value() * 1e6);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Fitting

namespace {

// Best (shortest) time per size, as (size, rate) sorted by size.
std::vector<std::pair<double, double>> best_rates(const std::vector<const KernelSample*>& samples) {
  std::map<double, double> best;  // size → best rate
  for (const KernelSample* sample : samples) {
    const double rate = sample->size / sample->time.value();
    auto [it, inserted] = best.emplace(sample->size, rate);
    if (!inserted) it->second = std::max(it->second, rate);
  }
  return {best.begin(), best.end()};
}

EfficiencyCurve efficiency_curve(const std::vector<std::pair<double, double>>& rates, double peak) {
  EfficiencyCurve curve;
  for (const auto& [size, rate] : rates) curve.points.emplace_back(size, std::min(1.0, rate / peak));
  return curve;
}

}  // namespace

CalibrationTable fit_calibration(const std::string& device, const std::vector<KernelSample>& samples,
                                 std::optional<std::map<Dtype, FlopsPerSecond>> known_peak,
                                 std::optional<BytesPerSecond> known_memory_bandwidth, std::string source) {
  const std::vector<std::string> copies = calibration_copy_names();
  const std::vector<std::string> kinds = layer_kind_names();
  std::map<std::pair<std::string, Dtype>, std::vector<const KernelSample*>> compute;
  // best rate per shape, by dtype and layout
  std::map<std::pair<Dtype, GemmOp>, std::map<std::tuple<double, double, double>, double>> shaped;
  std::vector<const KernelSample*> memory;
  std::map<std::string, std::vector<const KernelSample*>> copy_samples;
  for (const KernelSample& sample : samples) {
    if (!(sample.size > 0) || !(sample.time.value() > 0) || !std::isfinite(sample.size) ||
        !std::isfinite(sample.time.value()))
      throw std::invalid_argument(fmt::format("calibration sample '{}' of size {} has time {} s", sample.kernel,
                                              sample.size, sample.time.value()));
    if (sample.kind == "memory") {
      memory.push_back(&sample);
    } else if (std::find(copies.begin(), copies.end(), sample.kind) != copies.end()) {
      copy_samples[sample.kind].push_back(&sample);
    } else if (sample.shape.known() && sample.kind == layer_kind_name(LayerKind::matmul)) {
      if (is_backward_pair(sample.shape.op))
        throw std::invalid_argument(
            fmt::format("calibration sample '{}' times a backward pair, not one GEMM", sample.kernel));
      double& best = shaped[{sample.dtype, sample.shape.op}][{sample.shape.m, sample.shape.n, sample.shape.k}];
      best = std::max(best, sample.size / sample.time.value());
    } else if (std::find(kinds.begin(), kinds.end(), sample.kind) != kinds.end()) {
      compute[{sample.kind, sample.dtype}].push_back(&sample);
    } else {
      throw std::invalid_argument(
          fmt::format("calibration sample '{}' has unknown kind '{}'", sample.kernel, sample.kind));
    }
  }

  CalibrationTable table;
  table.device = device;
  table.source = std::move(source);

  std::map<std::pair<std::string, Dtype>, std::vector<std::pair<double, double>>> rates;
  std::map<Dtype, double> observed_peak;
  for (const auto& [key, group] : compute) {
    auto& curve_rates = rates[key] = best_rates(group);
    for (const auto& [size, rate] : curve_rates) observed_peak[key.second] = std::max(observed_peak[key.second], rate);
  }
  for (const auto& [key, best] : shaped)
    for (const auto& [shape, rate] : best) observed_peak[key.first] = std::max(observed_peak[key.first], rate);
  for (const auto& [dtype, rate] : observed_peak) {
    if (known_peak && known_peak->contains(dtype))
      table.peak[dtype] = known_peak->at(dtype);
    else
      table.peak[dtype] = FlopsPerSecond(rate);
  }
  if (known_peak)  // a given peak is recorded even without samples of its dtype
    for (const auto& [dtype, rate] : *known_peak) table.peak.emplace(dtype, rate);
  for (const auto& [key, curve_rates] : rates)
    table.compute[key] = efficiency_curve(curve_rates, table.peak.at(key.second).value());
  for (auto& [key, best] : shaped) {
    const double peak = table.peak.at(key.first).value();
    for (auto& [shape, rate] : best) rate = std::min(1.0, rate / peak);
    std::string why;
    std::optional<GemmEfficiencyGrid> grid = gemm_grid(best, why);
    if (!grid)
      throw std::invalid_argument(
          fmt::format("GEMM shape samples of {} ({}): {}", dtype_name(key.first), gemm_op_name(key.second), why));
    table.gemm.emplace(key, std::move(*grid));
  }

  const std::vector<std::pair<double, double>> memory_rates = best_rates(memory);
  double bandwidth = 0;
  for (const auto& [size, rate] : memory_rates) bandwidth = std::max(bandwidth, rate);
  if (known_memory_bandwidth) bandwidth = known_memory_bandwidth->value();
  table.memory_bandwidth = BytesPerSecond(bandwidth);
  if (bandwidth > 0) table.memory = efficiency_curve(memory_rates, bandwidth);

  for (const auto& [name, group] : copy_samples)
    for (const auto& [size, rate] : best_rates(group)) table.copies[name].points.emplace_back(size, rate);
  return table;
}

void report_calibration_stage(const CalibrationProgress& progress, std::string_view stage, std::size_t samples_so_far) {
  if (progress) progress(fmt::format("{} ({} samples so far)", stage, samples_so_far));
}

OptionSchema cuda_calibration_options() {
  OptionSchema schema;
  schema.integer("repetitions", 10, "timed runs per sample, the fastest counts (quick: 3)").range(1, 1000);
  return schema;
}

void register_builtin_calibration_backends(CalibrationBackendRegistry& registry) {
  registry.add("cpu",
               "host CPU, single-threaded Eigen: square fp32 GEMM sweep (matmul), an m × n × k GEMM shape grid, "
               "bias+ReLU (elementwise), "
               "STREAM triad (memory), memcpy (device_to_device); peaks are the best observed rates",
               "dnnsim; triad after McCalpin, STREAM (IEEE TCCA Newsletter, 1995)",
               std::make_shared<const CpuCalibrationBackend>(), CpuCalibrationBackend::options());
}

}  // namespace dnnsim
