// Host-to-host transfers: the one way every simulation in dnnsim puts bytes on the network.
//
// A transfer is a two-host parallel task with no computation. SimGrid 3.32's host model turns that
// into exactly the network action `Comm::sendto` starts (HostCLM03Model::execute_parallel calls
// NetworkModel::communicate(from, to, bytes): same route, latency, max-min sharing, bandwidth and
// state profiles). Its size is whole bytes, as a Comm's (uint64_t) is, so every result is the one
// Comm::sendto gave, to the bit: keeping sub-byte fractions moved results by ~1e-8 relative, which a
// contended cluster replay's scheduler amplified into a 10% longer makespan (docs/performance.md).
// Why not `Comm::sendto`: 3.32 detaches every host-to-host Comm onto the maestro's activity list,
// and each one finishing removes itself by scanning that whole list (CommImpl::finish:
// std::list::remove), O(flows in flight) per flow — 67% of a 16,384-GPU data-parallel run
// (docs/performance.md). An Exec stays on its issuing actor's own list. Upstream SimGrid replaced
// the list by a set after 3.32 (commit 5f8fc2c203); Debian 12 ships 3.32. A transfer of no bytes
// (latency only) is a Comm: the host model refuses a task with nothing to do, and such transfers are
// too rare for the list to matter.
//
// Each activity is set up and started in one simcall (simgrid::kernel::actor::simcall_answered,
// public in simgrid/simix.hpp): s4u's setters are a simcall each, a round trip to the maestro (a
// context switch each way), so `exec_init(hosts, flops, bytes)` then `start()` cost four round trips
// where one does the same work. The Exec is created in the calling actor first, so that it lands on
// that actor's activity list (created inside the simcall it would land on the maestro's, the list
// 3.32 scans). Results are the same to the bit (docs/performance.md, "Scale without shortcuts").
#pragma once

#include <simgrid/s4u.hpp>
#include <vector>

namespace dnnsim {

// Starts sending `bytes` (rounded down to whole bytes) from `from` to `to` on behalf of the calling
// actor.
simgrid::s4u::ActivityPtr start_transfer(simgrid::s4u::Host* from, simgrid::s4u::Host* to, double bytes);

// Starts computing `flops` on `host` on behalf of the calling actor (what this_actor::execute does
// on the actor's own host, in one simcall instead of four).
simgrid::s4u::ActivityPtr start_execution(simgrid::s4u::Host* host, double flops);

// Waits for an execution that start_execution started on the calling actor's own host; no other
// actor may kill the caller meanwhile. Not Activity::wait(): in SimGrid 3.32 that starts a second
// action for every wait, a SynchroImpl holding a sleep action on the waiting actor's host ("to be
// notified of host failures", ActivityImpl::wait_for), a max-min variable expanded on and later
// freed from the host's CPU constraint. Activity::wait_any of the one activity waits without it:
// one SimGrid action per compute instead of two (docs/performance.md, "One SimGrid action per wait").
//  - Results are the same to the bit: the sleep's updates mark modified the constraint that the
//    execution itself modifies at the same dates (its start, its end), before the same solve.
//    Transfers keep Activity::wait(): there the sleep's updates fall between a running compute's
//    start and end, SimGrid's lazy update then recomputes that compute's completion date, and
//    removing them moved regression results in the last bits.
//  - Kills: wait_any registers the waiting actor with the activity alone, which 3.32's
//    ActorImpl::exit does not undo, so an actor killed by another actor (Actor::kill, kill_all) while
//    it waits so is resumed, dead, when the execution ends (an ImpossibleError in smx_ctx_wrapper).
//    A failure of its own host is safe: SimGrid does not resume an actor whose host is off.
void finish_execution(const simgrid::s4u::ActivityPtr& execution);

// Starts taking `rate` flop/s of `host`'s speed until end_occupation: SimGrid's CPU model shares a
// host among its executions max-min fairly, so a bounded one leaves the others speed − rate (while
// rate ≤ speed / 2). What an NCCL kernel's SMs take from the GEMMs beside it (executor.cpp).
simgrid::s4u::ActivityPtr start_occupation(simgrid::s4u::Host* host, double rate);
void end_occupation(const simgrid::s4u::ActivityPtr& occupation);

// Waits for a started transfer: false if it failed (a link of its route or an endpoint host went
// down), whichever primitive carried it.
bool finish_transfer(const simgrid::s4u::ActivityPtr& transfer);

// Waits for every transfer, for simulations that model no network failure (their workloads refuse
// `network.failures`: WorkloadSpec::failures_unsupported), so a failed one is a std::logic_error.
void finish_transfers(const std::vector<simgrid::s4u::ActivityPtr>& transfers);

}  // namespace dnnsim
