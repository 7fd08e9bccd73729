// Runs the collectives' programs (program.h) straight on the chips' NICs, for scale studies
// (`--chips coarse`): each rank's streams are sequencers beside its chip that post every RDMA
// write on the NIC as a verbs call (a WRITE with immediate; the immediate raises the peer's
// signal when the data has landed, the acknowledgement the writer's), and hand reductions and
// copies to a rate model of the chip's collective engines (engine_timer.h), which in a
// functional system also reduce or copy the bytes in the chip's memory when the job ends.
// Captures: the programs' order (streams in order, signals across streams and chips, a stream's
// job waiting for the job before it when they touch the same bytes), the NIC's verbs, messages
// and completions unchanged, the engines' slicing, rate and latency. Ignores: command buffers,
// queue managers, sync managers, DMA descriptors, the driver and the host (no set-up, no
// upload, no submission: a collective starts on every chip the moment it is launched), and the
// memory traffic of engine jobs. docs/collectives.md gives its agreement with the detailed
// chips ("Coarse chips").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "collectives/engine_timer.h"
#include "collectives/program.h"
#include "core/event_queue.h"
#include "hw/roce/completion_queue.h"
#include "hw/system/system_model.h"

namespace podsim::collectives {

class DirectLauncher : private core::Timed {
 public:
  using PeerOf = std::function<int(int rank, std::uint32_t qpn)>;
  using RankDone = std::function<void(int rank, bool ok, core::TimePs end)>;
  // Runs launched at once at most (the immediate carries a run's slot beside the signal).
  static constexpr std::uint32_t kSignalBits = 20;
  static constexpr std::uint32_t kSlots = 1u << (32 - kSignalBits);

  explicit DirectLauncher(system::SystemModel& model);
  DirectLauncher(const DirectLauncher&) = delete;
  DirectLauncher& operator=(const DirectLauncher&) = delete;
  ~DirectLauncher() override;

  // A QP from `port` of `chip` whose completions come to this launcher.
  std::uint32_t create_qp(int chip, int port);
  // Runs `programs` from `start_delay_ps` on (what launching them takes), rank r on chips[r];
  // rank_done(r, ok, end) when every host has learnt (a host notice, `notice_ps` after `end`)
  // that rank r's streams have issued everything and every write and job of theirs has
  // finished. Only ranks on chips this process simulates run; the others' notices come from the
  // processes that simulate them. Throws std::invalid_argument on programs that name a signal,
  // peer or rank that does not exist, a write of no bytes, or too many signals or runs at once.
  void launch(std::vector<int> chips, std::vector<Program> programs, const PeerOf& peer_of,
              RankDone rank_done, core::TimePs start_delay_ps, core::TimePs notice_ps);
  // Runs not yet finished.
  int running() const { return running_; }

 private:
  struct Run;
  struct Pending;
  struct ChipSide;

  ChipSide& side(int chip);  // made on first use
  void fire(std::uint32_t tag) override;
  void prefetch(std::uint32_t tag, const void* hot, int stage) const override;
  void start(Run& run);
  void try_stream(Run& run, int rank, std::uint32_t stream);
  bool issue(Run& run, int rank, std::uint32_t stream, const Command& c);
  void issue_job(Run& run, int rank, std::uint32_t stream, const Command& c);
  void raise(Run& run, int rank, std::uint32_t signal);
  void settle(Run& run, int rank);
  void rank_noticed(Run& run, int rank, bool ok, core::TimePs end);
  void on_send(const roce::Completion& c);
  void on_receive(int chip, const roce::Completion& c);
  void run_job_bytes(int chip, const Job& job);
  std::uint32_t take_pending(const Pending& p);
  static void validate(const std::vector<int>& chips, const std::vector<Program>& programs,
                       const PeerOf& peer_of, int system_chips);

  system::SystemModel& model_;
  core::EventQueue& queue_;
  std::vector<std::unique_ptr<ChipSide>> chips_;  // by chip, made on first use
  std::vector<std::unique_ptr<Run>> runs_;        // by slot
  std::vector<Pending> pending_;                  // writes and jobs under way, by token
  std::vector<std::uint32_t> free_pending_;
  std::uint32_t next_slot_ = 0;
  int running_ = 0;
  std::vector<std::uint8_t> scratch_a_, scratch_b_;  // functional jobs
};

}  // namespace podsim::collectives
