#include "sim/cluster/job_attempts.hpp"

#include <algorithm>
#include <cmath>
#include <simgrid/Exception.hpp>
#include <stdexcept>
#include <utility>

#include "sim/platform/actors.hpp"

namespace sg4 = simgrid::s4u;

namespace dnnsim {
namespace {

// Executions measure time, not FLOPs: an attempt's `seconds` of work is seconds × kScale flops bounded
// at kScale flop/s, so it lasts exactly that long whatever the host (hosts are at least this fast).
constexpr double kScale = 1e6;

// Job level: one execution of the rest of the work, replaced whenever the job's speed changes.
void start_job_level(JobRun& run, double restart, int generation, double now, const AttemptContext& context) {
  run.segment_start = now;
  run.attempt_seconds = run.seconds_to_finish();
  JobRun* self = &run;
  const AttemptContext* ctx = &context;
  run.actor = start_actor("job", context.in->controller_host, ActorStack::small, [ctx, self, restart, generation] {
    if (restart > 0) sg4::this_actor::sleep_for(restart);
    for (;;) {
      // The rest of the work at the current speed; replaced (cancelled) when the speed changes.
      auto exec = sg4::this_actor::exec_init(1);  // a simcall: the controller may reprice meanwhile
      const unsigned version = self->speed_version;
      self->segment_start = std::max(self->segment_start, sg4::Engine::get_clock());
      self->attempt_seconds = self->seconds_to_finish();
      exec->set_flops_amount(self->attempt_seconds * kScale);
      exec->set_bound(kScale);
      self->exec = exec;
      exec->start();  // a simcall too
      if (version != self->speed_version) {
        if (exec->get_state() == sg4::Activity::State::STARTED) exec->cancel();  // unless the controller did
        continue;
      }
      self->repricing = false;
      try {
        exec->wait();
        break;
      } catch (const simgrid::CancelException&) {
        if (!self->repricing) return;  // preempted: the controller has accounted for the attempt
      }
    }
    self->exec = nullptr;
    ctx->completed(self->view.id, generation);
  });
}

// The actor body of both network modes: batches of n iterations (about `batch_seconds` solo) until
// the work is done, `batch(n)` running one at the job's current packing slowdown; progress is
// checkpointed at batch ends, and a preemption (a cancel) keeps what the finished batches did.
template <class Batch>
void run_batches(const AttemptContext& context, JobRun* self, double restart, int generation, double per_iter,
                 Batch batch) {
  try {
    if (restart > 0) sg4::this_actor::sleep_for(restart);
    while (self->view.remaining_iterations() > 1e-9) {
      const double n = std::min(self->view.remaining_iterations(),
                                std::max(1.0, std::floor(context.in->batch_seconds.value() / per_iter)));
      const double batch_start = sg4::Engine::get_clock();
      self->batch_start = batch_start;
      self->batch_iterations = n;
      self->batch_slowdown = self->slowdown;
      batch(n);
      self->batch_start = -1;
      self->view.done_iterations += n;
      self->slowdown_sum += (sg4::Engine::get_clock() - batch_start) / (n * per_iter);
      ++self->batches;
    }
  } catch (const simgrid::CancelException&) {
    return;
  }
  context.completed(self->view.id, generation);
}

// Network mode: batches of compute + a ring of flows between the job's servers.
void start_ring_batches(JobRun& run, const Placement& placement, const IterationCost& cost, double restart,
                        int generation, const AttemptContext& context) {
  const ClusterSimInput& in = *context.in;
  double min_nic = 1e300;
  for (const auto& [server, count] : placement.slices)
    min_nic = std::min(min_nic, in.servers[server].nic_bandwidth.value());
  const double nic_alone = cost.sync_bytes.value() > 0 ? cost.sync_bytes.value() / min_nic : 0.0;
  const double local_per_iter = std::max(cost.compute.value(), cost.total().value() - nic_alone);
  std::vector<sg4::Host*> ring;
  for (const auto& [server, count] : placement.slices) ring.push_back(in.server_gpus[server].front());
  JobRun* self = &run;
  const AttemptContext* ctx = &context;
  run.actor =
      start_actor("job", ring.front(), ActorStack::small, [ctx, self, restart, generation, cost, local_per_iter, ring] {
        run_batches(*ctx, self, restart, generation, cost.total().value(), [&](double n) {
          self->exec = sg4::this_actor::exec_init(n * local_per_iter * self->batch_slowdown * kScale);
          self->exec->set_bound(kScale);
          self->exec->wait();
          self->exec = nullptr;
          if (ring.size() > 1 && cost.sync_bytes.value() > 0) {
            for (std::size_t i = 0; i < ring.size(); ++i)
              self->transfers.push_back(
                  start_transfer(ring[i], ring[(i + 1) % ring.size()], n * cost.sync_bytes.value()));
            *ctx->flows += ring.size();
            finish_transfers(self->transfers);
            self->transfers.clear();
          }
        });
      });
}

// Network mode, parameter-server job: per batch of n iterations the forward passes run, then the
// backward passes run while every worker pushes n × its gradients' share to the PSs of each server
// (one flow per worker and PS server, n·p·k_h/k bytes) and, once every push is in, pulls the same
// back. Workers are the first GPUs of their servers; a PS's endpoint is a host of its server (the
// NIC and the network are what its flows share). The overlap is the recursion's best case,
// max(backward, push + pull) per batch, not its layer-by-layer order (parameter_server.hpp).
void start_ps_batches(JobRun& run, const Placement& placement, const IterationCost& cost, double restart,
                      int generation, const AttemptContext& context) {
  const ClusterSimInput& in = *context.in;
  std::vector<sg4::Host*> workers;
  for (const auto& [server, count] : placement.slices)
    for (int g = 0; g < count; ++g)
      workers.push_back(in.server_gpus[server][static_cast<std::size_t>(g) % in.server_gpus[server].size()]);
  std::vector<std::pair<sg4::Host*, double>> ps_hosts;  // (endpoint, share of the parameters)
  const double k = placement.parameter_servers();
  for (const auto& [server, count] : placement.ps) ps_hosts.emplace_back(in.server_gpus[server].front(), count / k);
  JobRun* self = &run;
  const AttemptContext* ctx = &context;
  run.actor =
      start_actor("job", workers.front(), ActorStack::small, [ctx, self, restart, generation, cost, workers, ps_hosts] {
        const double forward = (cost.compute - cost.backward).value();
        run_batches(*ctx, self, restart, generation, cost.total().value(), [&](double n) {
          self->exec = sg4::this_actor::exec_init(n * forward * self->batch_slowdown * kScale);
          self->exec->set_bound(kScale);
          self->exec->wait();
          self->exec = sg4::this_actor::exec_init(n * cost.backward.value() * self->batch_slowdown * kScale);
          self->exec->set_bound(kScale);
          self->exec->start();
          for (int direction = 0; direction < 2; ++direction) {
            for (sg4::Host* worker : workers)
              for (const auto& [host, share] : ps_hosts)
                if (host != worker) {
                  const double bytes = n * cost.ps_bytes.value() * share;
                  self->transfers.push_back(direction == 0 ? start_transfer(worker, host, bytes)
                                                           : start_transfer(host, worker, bytes));
                }
            *ctx->flows += self->transfers.size();
            finish_transfers(self->transfers);
            self->transfers.clear();
          }
          self->exec->wait();
          self->exec = nullptr;
        });
      });
}

}  // namespace

double JobRun::seconds_to_finish() const {
  if (curve.empty()) return view.remaining_iterations() * slowdown / rate;
  double seconds = 0.0, at = view.done_iterations;
  for (const auto& segment : curve) {
    if (segment.to <= at) continue;
    const double to = std::min(segment.to, view.total_iterations);
    if (segment.rate <= 0) throw std::logic_error("a job with no valid batch size on its placement was started");
    seconds += (to - at) / segment.rate;
    at = to;
    if (at >= view.total_iterations) break;
  }
  return seconds * slowdown;
}

double JobRun::progress_in(double seconds) const {
  if (curve.empty()) return seconds * rate / slowdown;
  double left = seconds / slowdown, at = view.done_iterations;
  for (const auto& segment : curve) {
    if (segment.to <= at || left <= 0) continue;
    const double span = std::min(left * segment.rate, segment.to - at);
    at += span;
    left -= span / segment.rate;
  }
  return at - view.done_iterations;
}

void start_attempt(JobRun& run, const Placement& placement, const IterationCost& cost, double restart, int generation,
                   double now, const AttemptContext& context) {
  if (context.in->server_gpus.empty())
    start_job_level(run, restart, generation, now, context);
  else if (run.view.record->ps_per_worker > 0)
    start_ps_batches(run, placement, cost, restart, generation, context);
  else
    start_ring_batches(run, placement, cost, restart, generation, context);
}

}  // namespace dnnsim
