#include "sim/platform/transfer.hpp"

#include <cmath>
#include <limits>
#include <simgrid/Exception.hpp>
#include <simgrid/simix.hpp>
#include <stdexcept>
#include <typeinfo>

namespace sg4 = simgrid::s4u;

namespace dnnsim {

// A simcall switches to maestro's context and back; an actor killed meanwhile (Actor::kill_all after a
// failure, executor.hpp) unwinds from inside it. AddressSanitizer does not know SimGrid's actor stacks
// (swapcontext, google/sanitizers#189): the __asan_handle_no_return it calls before _Unwind_Resume
// here then reports its own sigaltstack call as a stack-use-after-scope. These two functions hold no
// buffer to check, so they are left uninstrumented.
#if defined(__SANITIZE_ADDRESS__)
#define DNNSIM_ACTOR_SIMCALL __attribute__((no_sanitize_address))
#else
#define DNNSIM_ACTOR_SIMCALL
#endif

DNNSIM_ACTOR_SIMCALL sg4::ActivityPtr start_transfer(sg4::Host* from, sg4::Host* to, double bytes) {
  const double whole = std::floor(bytes);
  if (!(whole > 0)) return sg4::Comm::sendto_async(from, to, 0);
  sg4::ExecPtr exec = sg4::Exec::init();  // in the actor: on its own activity list
  simgrid::kernel::actor::simcall_answered([&exec, from, to, whole] {
    exec->set_flops_amounts({0.0, 0.0})->set_bytes_amounts({0.0, whole, 0.0, 0.0})->set_hosts({from, to})->start();
  });
  return exec;
}

DNNSIM_ACTOR_SIMCALL sg4::ActivityPtr start_execution(sg4::Host* host, double flops) {
  sg4::ExecPtr exec = sg4::Exec::init();
  simgrid::kernel::actor::simcall_answered(
      [&exec, host, flops] { exec->set_flops_amount(flops)->set_host(host)->start(); });
  return exec;
}

void finish_execution(const sg4::ActivityPtr& execution) { sg4::Activity::wait_any({execution}); }

DNNSIM_ACTOR_SIMCALL sg4::ActivityPtr start_occupation(sg4::Host* host, double rate) {
  sg4::ExecPtr exec = sg4::Exec::init();
  simgrid::kernel::actor::simcall_answered([&exec, host, rate] {
    exec->set_flops_amount(std::numeric_limits<double>::max())->set_bound(rate)->set_host(host)->start();
  });
  return exec;
}

void end_occupation(const sg4::ActivityPtr& occupation) { occupation->cancel(); }

bool finish_transfer(const sg4::ActivityPtr& transfer) {
  try {
    // Comm::wait_for is not Activity::wait_for (it resets the simcall's observer on a failure).
    // typeid, not dynamic_cast: a dynamic_cast that fails (an Exec, nearly every transfer) walks the
    // class hierarchy, ~310 instructions a transfer, 0.8% of a 256-GPU GPT-3 run (docs/performance.md,
    // "SimGrid's own work per activity"); nothing derives from s4u::Comm.
    if (typeid(*transfer) == typeid(sg4::Comm))
      static_cast<sg4::Comm&>(*transfer).wait();
    else
      transfer->wait();
    return true;
  } catch (const simgrid::NetworkFailureException&) {  // a Comm's link or peer failed
    return false;
  } catch (const simgrid::CancelException&) {  // an Exec whose network action failed: a link went down
    return false;
  } catch (const simgrid::HostFailureException&) {  // an Exec whose destination host is off
    return false;
  }
}

void finish_transfers(const std::vector<sg4::ActivityPtr>& transfers) {
  for (const sg4::ActivityPtr& transfer : transfers)
    if (!finish_transfer(transfer))
      throw std::logic_error("a transfer failed in a simulation that models no network failure");
}

}  // namespace dnnsim
