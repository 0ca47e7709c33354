#include "planners/jobs/speed_models.hpp"

#include "models/common/builtin_registry.hpp"
#include "planners/jobs/analytical_speed.hpp"
#include "planners/jobs/measured_speed.hpp"

namespace dnnsim {
namespace {

OptionSchema pollux_options() {
  OptionSchema schema;
  schema.file("tables", "the measured tables' folder (Pollux's simulator/traces: one folder per application)")
      .required();
  schema.quantity_map<Bytes>("gradients",
                             "gradient bytes per application (\"bert: 440MB\"): the ring flows of network mode");
  schema.choice("work", "iterations", {"iterations", "progress"},
                "a job's work: the validation file's iterations at its batch, or (progress) the artifact's "
                "TunedJobs accounting, progress at the gradient-noise gain of its batch (simulator.py Job.step)");
  schema.choice("accumulation", "measured", {"measured", "artifact"},
                "micro-steps only above a placement's largest measured local batch, or (artifact) of at most the "
                "application's largest local batch, one GPU above the smallest batch accumulating at least once "
                "(simulator.py update_local_bsz)");
  schema.file("applications",
              "accumulation artifact: per-application settings whose max_local_bsz caps a micro-step "
              "(data/traces/pollux-osdi21/applications.csv: yolov3 8, as the artifact)");
  return schema;
}

std::shared_ptr<const JobSpeedModel> make_pollux(const Options& options) {
  auto model = std::make_shared<PolluxSpeedModel>(*options.file("tables"));
  PolluxTunedJobs rules;
  rules.progress_work = options.choice("work") == "progress";
  rules.artifact_steps = options.choice("accumulation") == "artifact";
  if (const auto file = options.file("applications")) {
    if (!rules.artifact_steps)
      throw options.error("applications", "the settings are read only with accumulation: artifact");
    rules.settings = read_pollux_settings(*file, model->models());
  }
  model->set_tuned_jobs(std::move(rules));
  for (const auto& [application, bytes] : options.quantity_map<Bytes>("gradients"))
    model->set_gradient_bytes(application, bytes, options.where("gradients"));
  return model;
}

OptionSchema gavel_options() {
  OptionSchema schema;
  schema.file("tables", "Gavel's simulation_throughputs.json").required();
  schema.choice("colocation", "measured", {"measured", "fitted"},
                "a packed pair's slowdown as Gavel measured it, or from the interference model fitted on its pairs");
  return schema;
}

std::shared_ptr<const JobSpeedModel> make_gavel(const Options& options) {
  auto model = std::make_shared<GavelSpeedModel>(*options.file("tables"));
  if (options.choice("colocation") == "fitted") model->use_fitted_colocation();
  return model;
}

OptionSchema analytical_options() {
  OptionSchema schema;
  schema.number("efficiency", 0.5, "fraction of the GPUs' fp16 peak the layers' kernels reach").range(1e-3, 1.0);
  return schema;
}

void register_builtin_speed_models(SpeedModelRegistry& r) {
  r.add("duration", "one iteration per second: a job runs its trace duration wherever it is placed",
        "Tiresias and Helios simulators' duration replay",
        [](const Options&) -> std::shared_ptr<const JobSpeedModel> { return std::make_shared<DurationSpeedModel>(); });
  r.add("pollux",
        "measured step and sync time per placement and local batch, interpolated; iterations to target, or "
        "the artifact's TunedJobs progress",
        "Qiao et al., Pollux, OSDI'21 (petuum/adaptdl osdi21-artifact simulator)", make_pollux, pollux_options());
  r.add("gavel", "measured throughput per GPU type and scale, and of co-located pairs",
        "Narayanan et al., Gavel, OSDI'20 (simulation_throughputs.json)", make_gavel, gavel_options());
  r.add(
      "analytical",
      "dnnsim's cost models on the placement: roofline compute, ring or hierarchical all-reduce, "
      "or SMD's push/pull for parameter-server jobs",
      "dnnsim (models/cost; SMD, INFOCOM'21, for parameter servers)",
      [](const Options& o) -> std::shared_ptr<const JobSpeedModel> {
        return std::make_shared<AnalyticalSpeedModel>(o.number("efficiency"));
      },
      analytical_options());
}

}  // namespace

const SpeedModelRegistry& builtin_speed_models() {
  return builtin_registry<SpeedModelRegistry, register_builtin_speed_models>("speed source");
}

}  // namespace dnnsim
