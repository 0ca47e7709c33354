#include "sim/platform/actors.hpp"

#include <malloc.h>

#include <xbt/config.hpp>

namespace sg4 = simgrid::s4u;

namespace dnnsim {

namespace {
// glibc's M_TOP_PAD default (mallopt(3): 128 × 1024), restored after the stacks are made.
constexpr int kDefaultTopPad = 128 * 1024;
}  // namespace

ActorLauncher::ActorLauncher(ActorStack stack) : previous_kib_(simgrid::config::get_value<int>("contexts/stack-size")) {
  sg4::Engine::set_config("contexts/stack-size", static_cast<int>(stack));
  mallopt(M_TOP_PAD, 0);
}

ActorLauncher::~ActorLauncher() {
  mallopt(M_TOP_PAD, kDefaultTopPad);
  sg4::Engine::set_config("contexts/stack-size", previous_kib_);
}

sg4::ActorPtr ActorLauncher::start(const std::string& name, sg4::Host* host, const std::function<void()>& body) const {
  return sg4::Actor::create(name, host, body);
}

sg4::ActorPtr start_actor(const std::string& name, sg4::Host* host, ActorStack stack,
                          const std::function<void()>& body) {
  const ActorLauncher launcher(stack);
  return launcher.start(name, host, body);
}

}  // namespace dnnsim
