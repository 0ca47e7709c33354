// The wall time of one plan() call, for PlanStatistics::wall_seconds (planner.hpp): every planner
// starts one as it enters plan() and reads it into the result it returns.
#pragma once

#include <chrono>

namespace dnnsim {

class PlanClock {
 public:
  // Seconds since construction.
  [[nodiscard]] double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace dnnsim
