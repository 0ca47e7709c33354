// Job speed models: how long an iteration of a job takes on a placement (job_speed.hpp), chosen by a
// cluster workload's `speed: {source: NAME, …}` with the model's declared options (`dnnsim list
// speed-models --options`). One registry, explicit registration:
//   duration    one iteration per second: a job runs its trace duration wherever it is placed;
//   pollux      Pollux's measured step and sync times per placement (measured_speed.hpp);
//   gavel       Gavel's measured throughputs, alone and co-located (measured_speed.hpp);
//   analytical  dnnsim's cost models on the placement (analytical_speed.hpp).
#pragma once

#include <functional>
#include <memory>

#include "models/common/options.hpp"
#include "models/common/registry.hpp"
#include "planners/jobs/job_speed.hpp"

namespace dnnsim {

// @throw InputError (at an option) when its tables cannot be read or name an unknown application.
using SpeedModelFactory = std::function<std::shared_ptr<const JobSpeedModel>(const Options& options)>;
using SpeedModelRegistry = Registry<SpeedModelFactory>;

[[nodiscard]] const SpeedModelRegistry& builtin_speed_models();

}  // namespace dnnsim
