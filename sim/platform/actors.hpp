// The facade through which dnnsim's actor engines use SimGrid — the executor (sim/exec/executor),
// the cluster simulation (sim/cluster/), the parameter-server simulation
// (sim/workloads/parameter_server/ps_sim) and the GNN pipeline (sim/workloads/gnn/gnn_pipeline) —
// and the platform's background flows: actors are started with a declared stack, here and nowhere
// else, and bytes move between hosts by the transfers of sim/platform/transfer.hpp (included, so
// that an engine includes this header alone). SimGrid stays the engine: the rest of s4u (this_actor,
// activities, mutexes, condition variables, semaphores) is used as it is.
//
// Why stacks are declared: SimGrid gives every actor the same stack unless told otherwise (8 MiB, a
// memory mapping of its own above malloc's mmap threshold, sim/run/simulation.cpp). A 1,024-GPU
// pipeline has ~4,000 stream actors and a cluster trace thousands of job attempts; mapping and
// unmapping 8 MiB stacks for them took a fifth of a run (docs/performance.md, "Stream actor
// stacks"), so actors that only loop over SimGrid calls get small ones, and actors that call code
// whose depth dnnsim does not bound (a scheduler's decision, a solver, a learned policy, re-planning)
// keep the size of a Linux main thread.
#pragma once

#include <functional>
#include <simgrid/s4u.hpp>
#include <string>

#include "sim/platform/transfer.hpp"

namespace dnnsim {

// An actor's stack. The values are KiB.
enum class ActorStack : int {
  // Sleeps, executes and sends, nothing else: a cluster job attempt, its arrivals and rounds.
  small = 128,
  // A loop over SimGrid calls and the observers' callbacks (no recursion): a stream actor, a
  // background flow. The shipped scenarios that finish within a minute (46 of them) ran with 32 KiB
  // stream stacks behind guard pages (contexts/guard-size) without a fault: this is 8× that.
  loop = 256,
  // Calls code whose depth is not bounded here: a scheduler, an LP solver's recursion, a learned
  // policy's forward pass, a re-planning controller; the default of a Linux main thread.
  deep = 8192,
};

[[nodiscard]] constexpr double stack_bytes(ActorStack stack) { return static_cast<int>(stack) * 1024.0; }

// While it lives, the actors it starts get its stack; for many actors of one kind at once (a
// configuration change, not one per actor). SimGrid 3.32 applies `contexts/stack-size` to the actors
// created next (its Actor::init()->set_stacksize()->start() corrupts the run list: ASan, free of a
// non-malloc'ed address), so the size is set on construction and the previous one restored on
// destruction. With no guard page (sim/run/simulation.cpp) SimGrid callocs a stack; glibc's calloc
// zeroes a chunk unless it is freshly taken from the system at the top of the heap, and with no top
// pad (mallopt M_TOP_PAD 0, also set while it lives) most stacks are, so their pages stay untouched
// until the actor uses them and freeing them costs no system call (jemalloc, the release CLI's
// allocator, leaves fresh large blocks untouched anyway). Engines start their actors from one actor
// at a time (the maestro before the run, or one controller actor), so no other launcher changes the
// size between a launcher's construction and its actors' creation.
class ActorLauncher {
 public:
  explicit ActorLauncher(ActorStack stack);
  ~ActorLauncher();
  ActorLauncher(const ActorLauncher&) = delete;
  ActorLauncher& operator=(const ActorLauncher&) = delete;

  simgrid::s4u::ActorPtr start(const std::string& name, simgrid::s4u::Host* host,
                               const std::function<void()>& body) const;

 private:
  int previous_kib_;
};

// One actor: an ActorLauncher for it alone.
simgrid::s4u::ActorPtr start_actor(const std::string& name, simgrid::s4u::Host* host, ActorStack stack,
                                   const std::function<void()>& body);

}  // namespace dnnsim
