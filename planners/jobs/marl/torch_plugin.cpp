#include "planners/jobs/marl/torch_plugin.hpp"

#include <dlfcn.h>

#include <stdexcept>

namespace dnnsim {

const TorchPlugin& torch_plugin() {
  static const TorchPlugin* plugin = [] {
    void* handle = ::dlopen(DNNSIM_TORCH_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr)
      throw std::runtime_error(std::string("cannot load the libtorch plugin " DNNSIM_TORCH_PLUGIN ": ") + ::dlerror());
    auto* entry = reinterpret_cast<decltype(&dnnsim_torch_plugin)>(::dlsym(handle, "dnnsim_torch_plugin"));
    if (entry == nullptr) throw std::runtime_error("the libtorch plugin " DNNSIM_TORCH_PLUGIN " has no entry point");
    return entry();
  }();
  return *plugin;
}

}  // namespace dnnsim
