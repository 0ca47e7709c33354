#include "planners/jobs/job_scheduler.hpp"

#include <fmt/format.h>

#include "models/common/builtin_registry.hpp"

namespace dnnsim {

const SchedulerRegistry& builtin_schedulers() {
  return builtin_registry<SchedulerRegistry, register_builtin_schedulers>("scheduler");
}

}  // namespace dnnsim
