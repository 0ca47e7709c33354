// The one registry of built-in entries of an extension point (registry.hpp): made on first use by its
// `register_*` functions, in their order, and shared from then on (a function-local static, so the
// first use from any thread fills it once).
#pragma once

namespace dnnsim {

template <class Registry, auto... Register>
[[nodiscard]] const Registry& builtin_registry(const char* what) {
  static const Registry registry = [what] {
    Registry filled(what);
    (Register(filled), ...);
    return filled;
  }();
  return registry;
}

}  // namespace dnnsim
