#include "sim/workloads/gnn/gnn_pipeline.hpp"

#include <unistd.h>

#include <algorithm>
#include <deque>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>

#include "sim/platform/actors.hpp"
#include "sim/run/progress.hpp"

namespace sg4 = simgrid::s4u;

namespace dnnsim {
namespace {

// A FIFO of batches between two stages. Pops wait; pushes never do: what bounds the pipeline is
// each trainer's prefetch window, enforced when sampling claims a batch (GnnPipelineRun::claim), so
// no stage can block holding a batch another trainer's all-reduce is waiting for. Waits end early
// once the run is stopped (`stopped` set and wake() called), returning nothing.
class BatchQueue {
 public:
  explicit BatchQueue(const bool& stopped)
      : stopped_(stopped), mutex_(sg4::Mutex::create()), changed_(sg4::ConditionVariable::create()) {}

  void push(const GnnBatchWork* item) {
    std::unique_lock lock(*mutex_);
    items_.push_back(item);
    changed_->notify_all();
  }

  const GnnBatchWork* pop() {
    std::unique_lock lock(*mutex_);
    while (items_.empty() && !stopped_) changed_->wait(lock);
    if (stopped_) return nullptr;
    const GnnBatchWork* item = items_.front();
    items_.pop_front();
    return item;
  }

  void wake() { changed_->notify_all(); }

 private:
  const bool& stopped_;
  sg4::MutexPtr mutex_;
  sg4::ConditionVariablePtr changed_;
  std::deque<const GnnBatchWork*> items_;
};

class GnnPipelineRun {
 public:
  explicit GnnPipelineRun(const GnnPipelineInput& in)
      : in_(in),
        servers_(in.cpus.size()),
        state_mutex_(sg4::Mutex::create()),
        barrier_cv_(sg4::ConditionVariable::create()),
        progress_line_(std::cerr, ::isatty(STDERR_FILENO) != 0, "gnn pipeline", std::nullopt,
                       "of the batches trained") {
    result_.stage_busy.assign(servers_, std::vector<double>(kGnnCpuStages, 0.0));
    for (std::size_t s = 0; s < servers_; ++s) {
      const std::size_t gpus = in.gpus[s].size();
      result_.gpu_busy.emplace_back(gpus, 0.0);
      result_.trainer_busy.emplace_back(gpus, 0.0);
      result_.sync_wait.emplace_back(gpus, 0.0);
      result_.allreduce_time.emplace_back(gpus, 0.0);
      trainer_batches_.emplace_back(gpus, 0);
      for (const GnnBatchWork& batch : in.batches[s]) ++trainer_batches_[s][batch.gpu];
      for (std::size_t g = 0; g < gpus; ++g) {
        rounds_ = std::max(rounds_, trainer_batches_[s][g]);
        ring_.emplace_back(s, g);
      }
      total_batches_ += in.batches[s].size();
    }
    taken_.assign(servers_, std::vector<std::size_t>(kGnnCpuStages, 0));
    for (std::size_t s = 0; s < servers_; ++s) {
      queues_.emplace_back();
      for (int q = 0; q < kGnnCpuStages - 1; ++q) queues_.back().push_back(std::make_unique<BatchQueue>(stopped_));
      gpu_queues_.emplace_back();
      for (std::size_t g = 0; g < in.gpus[s].size(); ++g)
        gpu_queues_.back().push_back(std::make_unique<BatchQueue>(stopped_));
      // Each trainer's batches in dealing order, for the sampling stage's claims.
      pending_.emplace_back(in.gpus[s].size());
      for (std::size_t i = in.batches[s].size(); i-- > 0;) pending_.back()[in.batches[s][i].gpu].push_back(i);
      in_flight_.emplace_back(in.gpus[s].size(), 0);
      room_.push_back(sg4::ConditionVariable::create());
    }
  }

  GnnPipelineResult run() {
    {
      // Pool threads and trainers loop over SimGrid calls, their queues and the progress line.
      const ActorLauncher launcher(ActorStack::loop);
      for (std::size_t s = 0; s < servers_; ++s) {
        for (int stage = 0; stage < kGnnCpuStages; ++stage)
          for (std::uint32_t t = 0; t < in_.threads[s][static_cast<std::size_t>(stage)]; ++t)
            launcher.start(fmt_name(s, stage, t), in_.cpus[s][static_cast<std::size_t>(stage)],
                           [this, s, stage, t] { pool_thread(s, stage, t); });
        for (std::size_t g = 0; g < in_.gpus[s].size(); ++g)
          launcher.start("trainer" + std::to_string(s) + "." + std::to_string(g),
                         in_.cpus[s][static_cast<std::size_t>(GnnStage::dispatch)], [this, s, g] { trainer(s, g); });
      }
    }
    sg4::Engine::get_instance()->run();
    progress_line_.finish();
    result_.makespan = end_;
    return std::move(result_);
  }

 private:
  static std::string fmt_name(std::size_t s, int stage, std::uint32_t t) {
    static const char* const names[] = {"sample", "gather", "copy"};  // the pools, GnnStage's first three
    return std::string(names[stage]) + std::to_string(s) + "." + std::to_string(t);
  }

  void record(std::size_t s, GnnStage stage, std::uint32_t thread, const GnnBatchWork& batch, double start,
              double flops = 0) {
    end_ = std::max(end_, sg4::Engine::get_clock());
    result_.activities.push_back(GnnActivity{static_cast<std::uint32_t>(s), stage, thread, batch.index, batch.epoch,
                                             start, sg4::Engine::get_clock(), flops});
  }

  // A role's CPU work on server s's host of that role, beside its memory traffic where the
  // interference model has a bandwidth (GnnInterferenceInput).
  struct CpuWork {
    sg4::ExecPtr cpu, memory;

    void wait() const {
      cpu->wait();
      if (memory) memory->wait();
    }
  };

  CpuWork start_cpu(std::size_t s, std::size_t role, double core_seconds) {
    const GnnInterferenceInput& model = in_.interference;
    sg4::Host* host = in_.cpus[s][role];
    double seconds = core_seconds;
    if (pollution_) {
      // Work that has ended (its finish time is set when it does, before its owner waits on it) is
      // dropped; what is left runs on the host's cores beside this one.
      auto& running = running_[host];
      std::erase_if(running, [](const auto& work) { return work.first->get_finish_time() >= 0; });
      const bool other_role =
          std::any_of(running.begin(), running.end(), [role](const auto& work) { return work.second != role; });
      if (other_role && static_cast<int>(running.size()) >= host->get_core_count()) {
        seconds /= model.time_sliced[role];
        ++result_.time_sliced_works;
      }
    }
    ++result_.cpu_works;
    CpuWork work{sg4::this_actor::exec_init(seconds)->set_host(host)->start(), nullptr};
    if (pollution_) running_[host].emplace_back(work.cpu, role);
    if (!model.memory.empty() && model.traffic[role] > 0)
      work.memory = memory_stream(s, model.traffic[role] * core_seconds, model.traffic[role] * core_seconds / seconds);
    return work;
  }

  // `bytes` of memory traffic on server s's memory at most at `rate` (what the stream draws alone),
  // weighted by that rate so that streams over the bandwidth share it in proportion to demand. Only
  // the weights' ratios matter; in GB/s they stay far above the 1e-5 below which SimGrid's solver
  // treats a share as nothing (as a fraction of the memory's bandwidth, they fell under it at 1 PB/s,
  // and the run aborted).
  sg4::ExecPtr memory_stream(std::size_t s, double bytes, double rate) {
    constexpr double kWeightUnit = 1e9;  // B/s
    return sg4::this_actor::exec_init(bytes)
        ->set_host(in_.interference.memory[s])
        ->set_bound(rate)
        ->set_priority(rate / kWeightUnit)
        ->start();
  }

  sg4::ActivityPtr send(sg4::Host* from, sg4::Host* to, double bytes) {
    ++result_.flows;
    return start_transfer(from, to, bytes);
  }

  // Each remote server's request, its work there (on its host of the same role), its response: the
  // three phases for all the servers at once, beside `local` core-seconds on this server's host.
  void remote_round(std::size_t s, std::size_t role, double local, const std::vector<GnnRemoteWork>& remote) {
    sg4::Host* cpu = in_.cpus[s][role];
    std::optional<CpuWork> own;
    if (local > 0) own = start_cpu(s, role, local);
    result_.executions += local > 0 ? 1 : 0;
    std::vector<sg4::ActivityPtr> requests;
    for (const GnnRemoteWork& r : remote) {
      result_.remote_bytes += r.request_bytes + r.response_bytes;
      if (r.request_bytes > 0) requests.push_back(send(cpu, in_.cpus[r.server][role], r.request_bytes));
    }
    finish_transfers(requests);
    std::vector<CpuWork> work;
    for (const GnnRemoteWork& r : remote)
      if (r.core_seconds > 0) work.push_back(start_cpu(r.server, role, r.core_seconds));
    result_.executions += static_cast<long>(work.size());
    for (const CpuWork& w : work) w.wait();
    std::vector<sg4::ActivityPtr> responses;
    for (const GnnRemoteWork& r : remote)
      if (r.response_bytes > 0) responses.push_back(send(in_.cpus[r.server][role], cpu, r.response_bytes));
    finish_transfers(responses);
    if (own) own->wait();
  }

  // The sampling stage's next batch on server s: the earliest in dealing order among the trainers
  // with fewer than queue_depth batches in flight (claimed, not yet trained); waits while every
  // trainer with batches left is at its window. nullptr when none is left (or the run stopped).
  const GnnBatchWork* claim(std::size_t s) {
    std::unique_lock lock(*state_mutex_);
    for (;;) {
      if (stopped_) return nullptr;
      std::size_t best = SIZE_MAX, best_gpu = 0;
      bool any_left = false;
      for (std::size_t g = 0; g < pending_[s].size(); ++g) {
        if (pending_[s][g].empty()) continue;
        any_left = true;
        if (in_flight_[s][g] < in_.queue_depth && pending_[s][g].back() < best) {
          best = pending_[s][g].back();
          best_gpu = g;
        }
      }
      if (!any_left) return nullptr;
      if (best != SIZE_MAX) {
        pending_[s][best_gpu].pop_back();
        ++in_flight_[s][best_gpu];
        return &in_.batches[s][best];
      }
      room_[s]->wait(lock);
    }
  }

  void pool_thread(std::size_t s, int stage, std::uint32_t thread) {
    const std::vector<GnnBatchWork>& batches = in_.batches[s];
    auto& taken = taken_[s][static_cast<std::size_t>(stage)];
    while (!stopped_ && (stage == 0 || taken < batches.size())) {
      if (stage > 0) ++taken;
      const GnnBatchWork* batch = stage == 0 ? claim(s) : queues_[s][static_cast<std::size_t>(stage - 1)]->pop();
      if (batch == nullptr) return;
      const double start = sg4::Engine::get_clock();
      switch (stage) {
        case 0:
          remote_round(s, 0, batch->sample_core_seconds, batch->remote_sample);
          break;
        case 1: {
          std::vector<sg4::ActivityPtr> peers;
          for (const auto& [peer, bytes] : batch->peer_bytes) {
            result_.nvlink_bytes += bytes;
            peers.push_back(send(in_.gpus[s][peer], in_.gpus[s][batch->gpu], bytes));
          }
          remote_round(s, 1, batch->gather_core_seconds, batch->remote_gather);
          finish_transfers(peers);
          break;
        }
        default:
          if (batch->h2d_bytes > 0) {
            result_.h2d_bytes += batch->h2d_bytes;
            // The DMA reads the batch from host memory as it crosses PCIe: its traffic there runs
            // beside the flow, at most at the link's rate.
            const GnnInterferenceInput& model = in_.interference;
            const double traffic = model.traffic[static_cast<std::size_t>(GnnStage::copy)];
            sg4::ExecPtr memory = model.memory.empty() || traffic <= 0
                                      ? nullptr
                                      : memory_stream(s, traffic * batch->h2d_bytes, traffic * model.h2d_bandwidth);
            finish_transfers({send(in_.cpus[s][2], in_.gpus[s][batch->gpu], batch->h2d_bytes)});
            if (memory) memory->wait();
          }
          break;
      }
      result_.stage_busy[s][static_cast<std::size_t>(stage)] += sg4::Engine::get_clock() - start;
      record(s, static_cast<GnnStage>(stage), thread, *batch, start);
      if (stage + 1 < kGnnCpuStages)
        queues_[s][static_cast<std::size_t>(stage)]->push(batch);
      else
        gpu_queues_[s][batch->gpu]->push(batch);
    }
  }

  void trainer(std::size_t s, std::size_t g) {
    sg4::Host* gpu = in_.gpus[s][g];
    const auto position =
        static_cast<std::size_t>(std::find(ring_.begin(), ring_.end(), std::pair{s, g}) - ring_.begin());
    const auto& [next_server, next_gpu] = ring_[(position + 1) % ring_.size()];
    sg4::Host* next = in_.gpus[next_server][next_gpu];
    const double ring_bytes = ring_.size() > 1 ? 2.0 * static_cast<double>(ring_.size() - 1) /
                                                     static_cast<double>(ring_.size()) * in_.allreduce_bytes
                                               : 0;
    // A round's all-reduce belongs to the epoch of the batch this trainer trained before it (its last
    // one when it has none in the round and only joins the others' ring).
    std::uint32_t epoch = 0;
    for (std::size_t round = 0; round < rounds_ && !stopped_; ++round) {
      if (round < trainer_batches_[s][g]) {
        const GnnBatchWork* batch = gpu_queues_[s][g]->pop();
        if (batch == nullptr) return;
        epoch = batch->epoch;
        const double start = sg4::Engine::get_clock();
        // Asynchronous launch: the GPU runs while the thread dispatches; the step ends with both.
        sg4::ExecPtr compute =
            sg4::this_actor::exec_init(batch->gpu_seconds * gpu->get_speed())->set_host(gpu)->start();
        result_.executions += 2;
        if (batch->dispatch_core_seconds > 0)
          start_cpu(s, static_cast<std::size_t>(GnnStage::dispatch), batch->dispatch_core_seconds).wait();
        record(s, GnnStage::dispatch, static_cast<std::uint32_t>(g), *batch, start);
        compute->wait();
        result_.gpu_busy[s][g] += compute->get_finish_time() - start;
        result_.trainer_busy[s][g] += sg4::Engine::get_clock() - start;
        result_.activities.push_back(GnnActivity{static_cast<std::uint32_t>(s), GnnStage::train,
                                                 static_cast<std::uint32_t>(g), batch->index, batch->epoch, start,
                                                 compute->get_finish_time(), batch->gpu_flops});
        ++trained_;
        {
          std::unique_lock lock(*state_mutex_);
          --in_flight_[s][g];
          room_[s]->notify_all();
        }
        if (in_.progress && !progress_line_(static_cast<double>(trained_) / static_cast<double>(total_batches_)))
          stop();
      }
      if (ring_bytes > 0 && !stopped_) allreduce(s, g, gpu, next, ring_bytes, round, epoch);
    }
    end_ = std::max(end_, sg4::Engine::get_clock());
  }

  // Ring all-reduce at flow level (the bandwidth term of 2(p−1)/p of the gradients to the ring
  // neighbour, as collective_fidelity: flow does), between two barriers: every trainer enters with
  // its round's gradients and leaves with the reduced ones.
  void allreduce(std::size_t s, std::size_t g, sg4::Host* gpu, sg4::Host* next, double bytes, std::size_t round,
                 std::uint32_t epoch) {
    const double arrived = sg4::Engine::get_clock();
    if (!barrier()) return;
    const double start = sg4::Engine::get_clock();
    result_.sync_wait[s][g] += start - arrived;
    finish_transfers({send(gpu, next, bytes)});
    if (!barrier()) return;
    result_.allreduce_time[s][g] += sg4::Engine::get_clock() - start;
    result_.activities.push_back(GnnActivity{static_cast<std::uint32_t>(s), GnnStage::allreduce,
                                             static_cast<std::uint32_t>(g), static_cast<std::uint32_t>(round), epoch,
                                             start, sg4::Engine::get_clock(), 0});
    end_ = std::max(end_, sg4::Engine::get_clock());
  }

  // @return false when the run was stopped while waiting.
  bool barrier() {
    std::unique_lock lock(*state_mutex_);
    const long generation = barrier_generation_;
    if (++barrier_arrived_ == ring_.size()) {
      barrier_arrived_ = 0;
      ++barrier_generation_;
      barrier_cv_->notify_all();
      return true;
    }
    while (generation == barrier_generation_ && !stopped_) barrier_cv_->wait(lock);
    return !stopped_;
  }

  // Ctrl-C: every wait returns and every actor ends by itself (killing actors would unwind their
  // stacks across SimGrid's context switches, which AddressSanitizer cannot follow).
  void stop() {
    stopped_ = true;
    result_.interrupted = true;
    for (auto& server : queues_)
      for (auto& queue : server) queue->wake();
    for (auto& server : gpu_queues_)
      for (auto& queue : server) queue->wake();
    barrier_cv_->notify_all();
    for (auto& room : room_) room->notify_all();
  }

  const GnnPipelineInput& in_;
  std::size_t servers_;
  // Cache pollution is on when some role slows down time-sliced; then each CPU host's work in
  // flight, with its role, tells whether new work there is time-sliced with another role.
  bool pollution_ = std::any_of(in_.interference.time_sliced.begin(), in_.interference.time_sliced.end(),
                                [](double factor) { return factor < 1; });
  std::map<sg4::Host*, std::vector<std::pair<sg4::ExecPtr, std::size_t>>> running_;
  bool stopped_ = false;
  double end_ = 0;
  std::size_t rounds_ = 0, total_batches_ = 0, trained_ = 0;
  std::vector<std::vector<std::size_t>> trainer_batches_;
  std::vector<std::pair<std::size_t, std::size_t>> ring_;  // (server, GPU), servers then GPUs
  std::vector<std::vector<std::size_t>> taken_;            // per server, per stage after sampling: batches claimed
  std::vector<std::vector<std::vector<std::size_t>>>
      pending_;                                        // per server, per trainer: unclaimed batch indices, last = next
  std::vector<std::vector<std::uint32_t>> in_flight_;  // per server, per trainer: claimed, not yet trained
  std::vector<sg4::ConditionVariablePtr> room_;        // per server: a trainer's window opened
  std::vector<std::vector<std::unique_ptr<BatchQueue>>> queues_;      // per server: sample→gather, gather→copy
  std::vector<std::vector<std::unique_ptr<BatchQueue>>> gpu_queues_;  // per server, per GPU: copy→train
  sg4::MutexPtr state_mutex_;
  sg4::ConditionVariablePtr barrier_cv_;
  std::size_t barrier_arrived_ = 0;
  long barrier_generation_ = 0;
  SearchProgress progress_line_;
  GnnPipelineResult result_;
};

}  // namespace

GnnPipelineResult simulate_gnn_pipeline(const GnnPipelineInput& input) { return GnnPipelineRun(input).run(); }

}  // namespace dnnsim
