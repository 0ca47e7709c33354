#include "models/sync/statistical_efficiency.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dnnsim/source_paths.hpp"
#include "models/common/yaml_reader.hpp"

namespace dnnsim {

double StatisticalEfficiency::loss(double progress) const { return 1.0 / (a * progress + b) + c; }

double StatisticalEfficiency::progress_for_loss(double target) const {
  if (target <= c) return std::numeric_limits<double>::infinity();
  return std::max(0.0, (1.0 / (target - c) - b) / a);
}

double StatisticalEfficiency::averaging_gain(int workers) const {
  return (1.0 + beta) / (1.0 + beta / static_cast<double>(workers));
}

double StatisticalEfficiency::local_factor(double local_steps) const {
  return 1.0 / (1.0 + mu * std::max(0.0, local_steps - 1.0));
}

double StatisticalEfficiency::staleness_factor(double staleness) const { return 1.0 / (1.0 + lambda * staleness); }

double StatisticalEfficiency::synchronous_round(int workers, double local_steps) const {
  return local_steps * local_factor(local_steps) * averaging_gain(workers);
}

double StatisticalEfficiency::asynchronous_commit(double local_steps, double staleness) const {
  return local_steps * local_factor(local_steps) * staleness_factor(staleness);
}

std::string shipped_statistical_efficiency_path() { return DNNSIM_DATA_DIR "/convergence/digits-softmax.yaml"; }

StatisticalEfficiency load_statistical_efficiency(const std::string& path) {
  DiagnosticSink sink;
  YamlReader reader(path, sink);
  const YAML::Node root = reader.load_file();
  StatisticalEfficiency model;
  MapReader map(reader, root, "a statistical-efficiency file");
  if (map.valid()) {
    constexpr double kHuge = 1e300;
    model.a = map.number("a", 0, kHuge, true).value_or(model.a);
    model.b = map.number("b", 0, kHuge, true).value_or(model.b);
    model.c = map.number("c", 0, kHuge, true).value_or(model.c);
    model.beta = map.number("beta", 0, kHuge, true).value_or(model.beta);
    model.mu = map.number("mu", 0, kHuge, true).value_or(model.mu);
    model.lambda = map.number("lambda", 0, kHuge, true).value_or(model.lambda);
    model.source = map.string("source").value_or(path);
    (void)map.get("fit");  // the calibration's residuals and measured points, for people
    if (model.a <= 0 && map.has("a") && !map.refused("a"))
      reader.error(map.get("a"), "a must be positive (the loss must fall)");
    if (model.b <= 0 && map.has("b") && !map.refused("b"))
      reader.error(map.get("b"), "b must be positive (L(0) = 1/b + c is finite)");
    map.finish();
  }
  sink.throw_if_any();
  return model;
}

}  // namespace dnnsim
