// The chip's command processor for collective schedules, standing in for the queue managers and
// sync manager until collectives run from command buffers: it runs a program of streams, each an
// in-order list of commands (program.h: an RDMA WRITE with immediate on a QP of the chip's NIC, a
// reduction or a copy on the chip's DMA engines), and orders work across streams and chips with
// signals, counters that a command waits on and adds to when it finishes, as Gaudi's sync
// objects do.
// Captures: a command issues once the command before it in its stream has issued and its
// signal has reached its count; issuing costs a configured time; an arriving WRITE's immediate
// adds one to a signal of the receiving chip's program (its data has landed); several programs
// at once, each with its own signals (a collective id in the immediate). A program must wait
// on every signal its peers' writes raise before it ends, so that no write lands on a program
// that has finished.
// Jobs run on the DMA engines the chip gives it (those its memory feeds beside the NIC,
// Chip::collective_engines), several at once: a stream's jobs run one after another
// (the next starts once the one before has finished, so a job that reads what the one before it
// wrote sees it, as on a single queue); a job of at least twice `min_slice` bytes is cut into
// equal slices of whole elements, at least min_slice each and at most one per engine, which run
// side by side on the engines with the fewest of this sequencer's bytes in flight (the
// lowest-numbered on a tie, so runs are deterministic). A reduction combines element by
// element, so its slices are independent and the result is the same bit for bit.
// Ignores: command buffers in memory and their fetch, monitors' other actions, doorbells over
// PCIe, and work other initiators (QMANs) give the same engines when weighing their load.
// Issues run as callbacks of the shared core::EventQueue, not in a thread: a thread's timed wait
// per command put a kernel event and a context switch behind every one.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <systemc>
#include <vector>

#include "hw/chip/program.h"
#include "hw/core/config_binding.h"
#include "hw/core/event_queue.h"
#include "hw/core/ring.h"
#include "hw/roce/completion_queue.h"
#include "hw/roce/nic.h"

namespace podsim::chip {

struct SequencerConfig {
  core::Duration issue_latency{100000};

  template <class V>
  void describe(V& v) {
    v.field("issue_latency", issue_latency,
            core::Spec("time to issue one command once it may go")
                .min(0)
                .source("placeholder [U]: a queue manager's fetch and dispatch"));
  }
};

class Sequencer : public sc_core::sc_module, private core::Timed {
 public:
  static constexpr int kMaxPrograms = 256;  // programs in flight at once, by collective id
  static constexpr std::uint32_t kMaxSignals = 1u << 24;

  // `engines`: where reduce and copy jobs go (the chip's DMA engines); a chip without any runs
  // only programs without jobs. `min_slice`: the least bytes a slice of a job gives one engine
  // (0: jobs are never cut).
  Sequencer(sc_core::sc_module_name name, const SequencerConfig& config, roce::Nic& nic,
            std::vector<Engine*> engines, std::uint64_t min_slice);

  // QPs for collectives complete into these; make them with create_qp.
  std::uint32_t create_qp(int port);
  roce::Nic& nic() { return nic_; }

  // Starts `program` under collective id `id` (0..kMaxPrograms-1, unused on this chip until
  // `finished` runs). `finished(ok)` runs when every command has finished, or with false as
  // soon as one fails. Throws std::invalid_argument on a malformed program.
  void start(int id, Program program, std::function<void(bool ok)> finished);
  // True while a program runs under `id` here, or signals for one wait to start.
  bool busy(int id) const { return running_.count(id) != 0 || early_.count(id) != 0; }

 private:
  struct Stream {
    std::size_t next = 0;
    bool scheduled = false;
    // Its jobs (and their done signals) not finished: the first runs, the rest wait for it.
    std::vector<std::pair<Job, std::uint32_t>> jobs;
    std::size_t first_job = 0;
    int slices_left = 0;  // of the running job
    bool job_ok = true;
  };
  struct Running {
    Program program;
    std::vector<Stream> streams;
    std::vector<std::uint32_t> signals;
    std::vector<std::vector<std::pair<std::size_t, std::uint32_t>>> waiting;  // by signal
    std::size_t outstanding = 0;  // commands not finished
    std::function<void(bool)> finished;
    bool failed = false;
  };
  struct Issue {
    int id;
    std::size_t stream;
    core::TimePs at;
  };

  static std::uint32_t immediate(int id, std::uint32_t signal) {
    return (static_cast<std::uint32_t>(id) << 24) | signal;
  }
  void validate(const Program& program) const;
  void advance(int id, std::size_t stream);
  void arm();
  void fire(std::uint32_t tag) override;  // issues every command whose time has come
  void issue(int id, std::size_t stream, const Command& c);
  void queue_job(int id, std::size_t stream, const Command& c);
  void start_job(int id, std::size_t stream);
  void slice_done(int id, std::size_t stream, int engine, std::uint64_t bytes, bool ok);
  void add_signal(int id, std::uint32_t signal);
  void finish_command(int id, std::uint32_t signal, bool ok);
  void on_send_completion(const roce::Completion& c);
  void on_recv_completion(const roce::Completion& c);

  SequencerConfig config_;
  roce::Nic& nic_;
  std::vector<Engine*> engines_;
  std::uint64_t min_slice_;
  std::vector<std::uint64_t> engine_bytes_;  // bytes of this sequencer's jobs in flight, by engine
  std::vector<int> by_load_;                 // engine numbers, sorted when a job starts
  roce::CompletionQueue send_cq_, recv_cq_;
  std::map<int, Running> running_;
  // Signals that arrived before their program started here (a fast peer).
  std::map<int, std::map<std::uint32_t, std::uint32_t>> early_;
  std::map<std::uint64_t, std::pair<int, std::uint32_t>> pending_writes_;  // wr_id -> (id, done)
  std::uint64_t next_wr_id_ = 1;
  core::Ring<Issue> issues_;  // streams ready to issue, in order (and so in time)
  bool armed_ = false;        // a queue callback for issues_.front() is pending
  bool issuing_ = false;      // inside fire(): it arms again when done
};

}  // namespace podsim::chip
