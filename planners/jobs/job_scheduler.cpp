#include "planners/jobs/job_scheduler.hpp"

#include <fmt/format.h>

namespace dnnsim {

const SchedulerRegistry& builtin_schedulers() {
  static const SchedulerRegistry registry = [] {
    SchedulerRegistry result("scheduler");
    register_builtin_schedulers(result);
    return result;
  }();
  return registry;
}

}  // namespace dnnsim
