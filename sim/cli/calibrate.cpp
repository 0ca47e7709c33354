#include <fmt/format.h>

#include <fstream>
#include <iostream>

#include "models/common/builtin_registry.hpp"
#include "models/common/option_reader.hpp"
#include "models/hardware/catalog.hpp"
#include "models/sync/proxy_training.hpp"
#include "planners/jobs/marl/torch_plugin.hpp"
#include "sim/cli/commands.hpp"
#ifdef DNNSIM_CUDA_MODULE
#include <dlfcn.h>
#endif

namespace dnnsim::cli {

namespace {

// The "cuda" backend where it cannot be had: a build without nvcc, or a module that would not load.
// It is listed (`dnnsim list backends`) and says why it cannot run, as the real one does without a GPU.
class MissingCudaBackend final : public CalibrationBackend {
 public:
  explicit MissingCudaBackend(std::string why) : why_(std::move(why)) {}
  bool available(std::string& why) const override {
    why = why_;
    return false;
  }
  std::vector<KernelSample> run(bool, const Options&, const CalibrationProgress&) const override { return {}; }
  std::string device() const override { return "cuda"; }

 private:
  std::string why_;
};

// Built with nvcc present: the "cuda" backend lives in a module (DNNSIM_CUDA_MODULE, built beside
// dnnsim) loaded here, so that only the commands that list or run backends pay for cuBLAS.
void register_cuda_module(CalibrationBackendRegistry& registry) {
  std::string why =
      "this dnnsim was built without CUDA (CMake found no nvcc); rebuild where /usr/local/cuda/bin/nvcc exists";
#ifdef DNNSIM_CUDA_MODULE
  void* module = ::dlopen(DNNSIM_CUDA_MODULE, RTLD_NOW | RTLD_LOCAL);
  const auto entry = module == nullptr ? nullptr
                                       : reinterpret_cast<void (*)(CalibrationBackendRegistry*)>(
                                             ::dlsym(module, "dnnsim_register_cuda_calibration_backend"));
  if (entry != nullptr) {
    entry(&registry);  // the module stays loaded: the backend's code is in it
    return;
  }
  why = fmt::format("its module could not be loaded: {}", ::dlerror());
#endif
  registry.add("cuda", "CUDA device (cuBLAS GEMMs, kernels, copies): not available in this build",
               "dnnsim (models/calibration/cuda)", std::make_shared<const MissingCudaBackend>(std::move(why)),
               cuda_calibration_options());
}

// `--backend cpu` or `--backend '{name: cpu, repetitions: 3}'`: an entry and its options in the form a
// scenario writes them, read by the scenario's reader, so that a wrong option is a located error.
// @throw InputError with every problem of the text.
EntrySelection read_backend(const CalibrationBackendRegistry& registry, const std::string& text) {
  DiagnosticSink sink;
  YamlReader reader("--backend", sink);
  const YAML::Node node = reader.load_text(text);
  std::optional<EntrySelection> selection;
  if (sink.empty()) selection = read_entry(reader, node, registry);
  sink.throw_if_any();
  return std::move(*selection);
}

}  // namespace

const CalibrationBackendRegistry& calibration_backends() {
  return builtin_registry<CalibrationBackendRegistry, register_builtin_calibration_backends, register_cuda_module>(
      "calibration backend");
}

int run_calibrate(const CalibrateOptions& options) {
  const CalibrationBackendRegistry& registry = calibration_backends();
  const EntrySelection chosen = read_backend(registry, options.backend);
  const CalibrationBackend& backend = *registry.at(chosen.name).value;
  if (std::string why; !backend.available(why)) {
    std::cerr << fmt::format("dnnsim calibrate: the {} backend cannot run here: {}\n", chosen.name, why);
    return 1;
  }
  std::cerr << fmt::format("running the {} microbenchmarks{}…\n", chosen.name, options.quick ? " (quick)" : "");
  const std::vector<KernelSample> samples =
      backend.run(options.quick, chosen.options, [](const std::string& stage) { std::cerr << "  " << stage << "…\n"; });
  const std::string device = backend.device();

  // A catalog GPU is calibrated against its datasheet peaks (efficiency = achieved / datasheet);
  // the CPU has no catalog entry, so its best observed rates are its peaks.
  std::optional<std::map<Dtype, FlopsPerSecond>> peaks;
  std::optional<BytesPerSecond> bandwidth;
  if (const GpuSpec* gpu = HardwareCatalog::builtin().find_gpu(device)) {
    peaks.emplace();
    for (const std::string& name : dtype_names())
      if (auto peak = gpu->peak(*dtype_from_name(name))) (*peaks)[*dtype_from_name(name)] = *peak;
    bandwidth = gpu->memory_bandwidth;
  }
  const CalibrationTable table =
      fit_calibration(device, samples, peaks, bandwidth,
                      fmt::format("measured by `dnnsim calibrate --backend {}{}` ({} samples)", options.backend,
                                  options.quick ? " --quick" : "", samples.size()));
  const std::string out = options.out.empty() ? fmt::format("calibration-{}.yaml", device) : options.out;
  std::ofstream file(out, std::ios::binary);
  file << dump_calibration(table);
  if (!file) {
    std::cerr << fmt::format("dnnsim calibrate: cannot write {}\n", out);
    return 1;
  }
  std::cout << fmt::format("{} samples on {}; table written to {}\n", samples.size(), device, out);
  return 0;
}

int run_calibrate_convergence(const ConvergenceOptions& options) {
  ProxyOptions proxy = options.quick ? ProxyOptions::quick_options() : ProxyOptions{};
  proxy.seed = options.seed;
  proxy.label_skew = options.label_skew;
  if (options.learning_rate) proxy.learning_rate = *options.learning_rate;
  if (options.steps) proxy.sequential_steps = *options.steps;
  if (options.replicas) proxy.replicas = *options.replicas;
  if (options.proxy == "mlp")
    proxy.model = [&options](const DigitsData& data) {
      return torch_plugin().digits_mlp(data, options.hidden, options.seed);
    };
  std::cerr << fmt::format("training the convergence proxy ({} on the UCI digits){}…\n",
                           options.proxy == "mlp" ? "a tanh network" : "softmax regression",
                           options.quick ? " (quick)" : "");
  const ConvergenceCalibration calibration = calibrate_convergence(
      shipped_digits(), proxy, [](const std::string& line) { std::cerr << "  " << line << '\n'; });
  std::ofstream file(options.out, std::ios::binary);
  file << dump_convergence_calibration(calibration);
  if (!file) {
    std::cerr << fmt::format("dnnsim calibrate convergence: cannot write {}\n", options.out);
    return 1;
  }
  std::cout << fmt::format(
      "a = {:.4g}, b = {:.4g}, c = {:.4g}, beta = {:.4g}, mu = {:.4g}, lambda = {:.4g}; written to {}\n",
      calibration.curve.a, calibration.curve.b, calibration.curve.c, calibration.beta.value, calibration.mu.value,
      calibration.lambda.value, options.out);
  return 0;
}

}  // namespace dnnsim::cli
