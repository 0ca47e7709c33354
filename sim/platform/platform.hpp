// Builds the SimGrid platform of a scenario from its PlatformLayout (sim/scenario/layout.hpp):
// one full zone per node (its GPUs as hosts, a gateway router, explicit routes) under a root full
// zone holding the gateway-to-gateway routes — SimGrid's hierarchical routing, so a route is the
// source node's part + the inter-node part + the destination node's part.
//
// Network conditions become SimGrid profiles on the links they match (later conditions override
// earlier ones on the same link): a constant replaces the nominal bandwidth; a schedule or trace is
// a bandwidth profile (values in absolute bytes/s at absolute dates: see simgrid-recipes.md §2 pitfalls);
// a preemption process is a bandwidth profile fed lazily by a callback, seeded per link from the run
// seed; failure windows are state profiles (off, then on again).
#pragma once

#include <simgrid/s4u.hpp>

#include <memory>
#include <vector>

#include "sim/scenario/layout.hpp"
#include "sim/scenario/scenario.hpp"

namespace dnnsim {

struct Platform {
  PlatformLayout layout;
  std::vector<simgrid::s4u::Host*> gpus;  // in Cluster::gpu_names order
  std::vector<const GpuSpec*> gpu_specs;
  std::vector<double> compute_efficiency;
  std::vector<const CalibrationTable*> calibration;  // null where the node type has no table
  // Per node, its host CPU ("nodeN/cpu") when PlatformOptions::cpu_hosts asked for it, else empty.
  std::vector<simgrid::s4u::Host*> cpus;
};

struct PlatformOptions {
  // One CPU host per node, with the node type's cpu_cores (required then) at one core-second per
  // second each: executions given in core-seconds take that long on an idle core, and concurrent
  // ones share the cores (SimGrid's multi-core host). Off by default: the GPU kinds never use it,
  // and a 16k-GPU platform should not carry 2,048 idle hosts.
  bool cpu_hosts = false;
};

// The engine must exist. @throw InputError for problems only visible now (a trace file that cannot be read).
[[nodiscard]] Platform build_platform(const Scenario& scenario, const PlatformOptions& options = {});

// Starts one daemon actor per background flow (they end with the simulation).
void start_background_flows(const Scenario& scenario, const Platform& platform);

}  // namespace dnnsim
