// The CUDA calibration backend as a module that dnnsim loads only when it is asked for
// (sim/cli/calibrate.cpp): the one symbol dlsym looks up, with C linkage so that its name is fixed.
#include "models/calibration/cuda/cuda_backend.hpp"

extern "C" __attribute__((visibility("default"))) void dnnsim_register_cuda_calibration_backend(
    dnnsim::CalibrationBackendRegistry* registry) {
  dnnsim::register_cuda_calibration_backend(*registry);
}
