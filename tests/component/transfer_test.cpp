// Transfers (sim/platform/transfer.hpp) on kSwitch8 (tests/support/collective_platforms.hpp): a
// route i → j crosses port i up and port j down, α = 2 us, β = 100 GB/s, and SimGrid's CM02 without
// cross-traffic (create_engine) gives a flow alone latency + size / bandwidth, and flows sharing a
// port an equal share of it. Every TEST runs in its own process (one engine per process).
#include "sim/platform/transfer.hpp"

#include <gtest/gtest.h>

#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <vector>

#include "sim/platform/platform.hpp"
#include "sim/run/simulation.hpp"
#include "tests/support/collective_platforms.hpp"
#include "tests/support/scenario_files.hpp"

namespace sg4 = simgrid::s4u;

namespace dnnsim {
namespace {

using testing::kSwitchAlpha;
using testing::kSwitchBeta;
constexpr double kRounding = 1e-12;  // one transfer alone: its date is α + size/β up to rounding

struct Finished {
  bool ok = false;
  double at = -1;
};

// Runs `body` as an actor on GPU 0 of kSwitch8 and the engine to the end.
template <class Body>
void on_switch8(Body body) {
  const auto engine = create_engine();
  const Platform platform = build_platform(testing::load(testing::kSwitch8));
  sg4::Actor::create("test", platform.gpus[0], [&] { body(platform.gpus); });
  engine->run();
}

TEST(Transfer, AloneTakesLatencyPlusSizeOverBandwidthAsACommDoes) {
  // 1 MB: 2 us + 1e6 / 100e9 = 12 us, by a transfer 0 → 1 and by Comm::sendto 2 → 3 at once (no
  // shared port): the same network action.
  Finished transfer, comm;
  on_switch8([&](const std::vector<sg4::Host*>& gpus) {
    const sg4::ActivityPtr t = start_transfer(gpus[0], gpus[1], 1e6);
    const sg4::CommPtr c = sg4::Comm::sendto_async(gpus[2], gpus[3], 1000000);
    transfer.ok = finish_transfer(t);
    transfer.at = t->get_finish_time();
    c->wait();
    comm.at = c->get_finish_time();
  });
  EXPECT_TRUE(transfer.ok);
  EXPECT_NEAR(transfer.at, kSwitchAlpha + 1e6 / kSwitchBeta, kRounding);
  EXPECT_NEAR(comm.at, kSwitchAlpha + 1e6 / kSwitchBeta, kRounding);
}

TEST(Transfer, TwoIntoOnePortShareIt) {
  // 0 → 2 and 1 → 2 share port 2 down: 50 GB/s each after the latency, 2 us + 1e6 / 50e9 = 22 us.
  std::vector<double> ends;
  on_switch8([&](const std::vector<sg4::Host*>& gpus) {
    const std::vector<sg4::ActivityPtr> both{start_transfer(gpus[0], gpus[2], 1e6),
                                             start_transfer(gpus[1], gpus[2], 1e6)};
    finish_transfers(both);
    for (const sg4::ActivityPtr& t : both) ends.push_back(t->get_finish_time());
  });
  ASSERT_EQ(ends.size(), 2u);
  for (double end : ends) EXPECT_NEAR(end, kSwitchAlpha + 1e6 / (kSwitchBeta / 2), kRounding);
}

TEST(Transfer, SizesAreWholeBytesAsACommsAre) {
  // A Comm's size is an integer (1000.7 bytes are 1000): a transfer rounds the same way, so results
  // are the ones Comm::sendto gave, to the bit.
  double end = -1;
  on_switch8([&](const std::vector<sg4::Host*>& gpus) {
    const sg4::ActivityPtr t = start_transfer(gpus[0], gpus[1], 1000.7);
    ASSERT_TRUE(finish_transfer(t));
    end = t->get_finish_time();
  });
  EXPECT_NEAR(end, kSwitchAlpha + 1000 / kSwitchBeta, kRounding);
}

TEST(Transfer, NoBytesTakeTheLatency) {
  double end = -1;
  on_switch8([&](const std::vector<sg4::Host*>& gpus) {
    const sg4::ActivityPtr t = start_transfer(gpus[0], gpus[1], 0);
    ASSERT_TRUE(finish_transfer(t));
    end = t->get_finish_time();
  });
  EXPECT_NEAR(end, kSwitchAlpha, kRounding);
}

TEST(Transfer, ALinkGoingDownFailsIt) {
  // 1 GB takes 10 ms; port 1 goes down at 1 ms: the transfer fails then, and finish_transfers,
  // for simulations that model no failure, raises.
  Finished first;
  bool raised = false;
  on_switch8([&](const std::vector<sg4::Host*>& gpus) {
    std::vector<sg4::Link*> route;
    gpus[0]->route_to(gpus[1], route, nullptr);
    ASSERT_FALSE(route.empty());
    sg4::Link* down = route.back();
    sg4::Actor::create("cut", gpus[2], [down] {
      sg4::this_actor::sleep_until(1e-3);
      down->turn_off();
    });
    first.ok = finish_transfer(start_transfer(gpus[0], gpus[1], 1e9));
    first.at = sg4::Engine::get_clock();
    try {
      finish_transfers({start_transfer(gpus[0], gpus[1], 1e9)});
    } catch (const std::logic_error&) {
      raised = true;
    }
  });
  EXPECT_FALSE(first.ok);
  EXPECT_NEAR(first.at, 1e-3, kRounding);
  EXPECT_TRUE(raised);
}

TEST(Transfer, ADestinationGoingDownFailsIt) {
  Finished result;
  on_switch8([&](const std::vector<sg4::Host*>& gpus) {
    sg4::Host* dst = gpus[1];
    sg4::Actor::create("crash", gpus[2], [dst] {
      sg4::this_actor::sleep_until(1e-3);
      dst->turn_off();
    });
    result.ok = finish_transfer(start_transfer(gpus[0], dst, 1e9));
    result.at = sg4::Engine::get_clock();
  });
  EXPECT_FALSE(result.ok);
  EXPECT_NEAR(result.at, 1e-3, kRounding);
}

}  // namespace
}  // namespace dnnsim
