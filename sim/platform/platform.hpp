// Builds the SimGrid platform of a scenario from its PlatformLayout (sim/scenario/layout.hpp): one
// zone holding every host and link, whose routes are computed from the layout when SimGrid asks
// (computed_route_zone.hpp, cluster_routes.hpp) — the routes, latencies and so results of the
// hierarchical platform it replaces (a full zone per node under a root of gateway-to-gateway
// routes), without its zone-per-node costs at 16,384 nodes.
//
// Network conditions become SimGrid profiles on the links they match (later conditions override
// earlier ones on the same link): a constant replaces the nominal bandwidth; a schedule or trace is
// a bandwidth profile (values in absolute bytes/s at absolute dates: see simgrid-recipes.md §2 pitfalls);
// a preemption process is a bandwidth profile fed lazily by a callback, seeded per link from the run
// seed; failure windows are state profiles (off, then on again).
#pragma once

#include <atomic>
#include <memory>
#include <simgrid/s4u.hpp>
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
  // Per node, its CPU hosts as PlatformOptions::cpu_hosts asked for them (none by default).
  std::vector<std::vector<simgrid::s4u::Host*>> cpus;
};

// A host standing for some of a node's CPU cores: the whole CPU (`name` empty: "nodeN/cpu"), or a
// set of cores reserved for one purpose ("nodeN/cpu/sample"), as thread pools pinned to cores are.
// Each core runs one core-second per second: executions given in core-seconds take that long on an
// idle core, and concurrent ones share the host's cores (SimGrid's multi-core host). Every CPU host
// of a node has the node CPU's routes (layout.hpp). `speed` other than 1 stands for another resource
// of the CPU shared the same way: the gnn kind's memory bandwidth ("nodeN/cpu/memory", one core at
// the bandwidth in bytes per second).
struct CpuHostSpec {
  std::string name;
  int cores = 1;
  double speed = 1;
};

struct PlatformOptions {
  // Per node, the CPU hosts to create; empty (the default) for none: the GPU kinds never use them,
  // and a 16k-GPU platform should not carry 2,048 idle hosts.
  std::vector<std::vector<CpuHostSpec>> cpu_hosts;
  // Once set (Ctrl-C, InterruptGuard::flag), a preempted link's process draws no more periods and
  // keeps the bandwidth it has: its events are what moves the clock while a transfer of absurd length
  // is in flight, so without this the run would never reach the operation at which it stops.
  const std::atomic<bool>* stop = nullptr;
};

// The engine must exist. @throw InputError for problems only visible now (a trace file that cannot be read).
[[nodiscard]] Platform build_platform(const Scenario& scenario, const PlatformOptions& options = {});

// Starts one daemon actor per background flow (they end with the simulation).
void start_background_flows(const Scenario& scenario, const Platform& platform);

}  // namespace dnnsim
