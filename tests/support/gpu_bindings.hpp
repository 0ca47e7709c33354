// Device bindings for the component tests that drive an Executor themselves instead of simulate()
// (tests/component/executor_append_test.cpp, out_of_memory_test.cpp).
#pragma once

#include <cstddef>
#include <vector>

#include "sim/exec/executor.hpp"
#include "sim/platform/platform.hpp"

namespace dnnsim::testing {

// Graph device i bound to cluster GPU i with its spec, efficiency and calibration, as simulate()
// binds a graph whose devices are the cluster's GPUs in order (sim/run/simulation.cpp), without the
// CPU host that only host copies need.
inline std::vector<DeviceBinding> gpu_bindings(const Platform& platform, std::size_t devices) {
  std::vector<DeviceBinding> bindings;
  for (std::size_t gpu = 0; gpu < devices; ++gpu)
    bindings.push_back(DeviceBinding{platform.gpus[gpu], platform.gpu_specs[gpu], platform.compute_efficiency[gpu],
                                     platform.calibration[gpu]});
  return bindings;
}

}  // namespace dnnsim::testing
