// `podsim selftest`: a short simulation that checks an installation end to end. A streaming
// initiator writes a seeded pattern into a memory with the chip's HBM bandwidth through bulk
// TLM transactions, reads it back and compares, and reports the bandwidth it achieved against
// the configured one. It exercises the kernel, TLM transport, sparse memory, stats, trace and
// logging, which every model builds on.
#include <fmt/format.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <random>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/event_queue.h"
#include "core/kernel.h"
#include "core/log.h"
#include "core/memory_target.h"
#include "core/stats.h"
#include "core/trace.h"
#include "hw/system/system_model.h"
#include "sims/command.h"
#include "sims/progress.h"

namespace podsim::sims {
namespace {

struct StreamPlan {
  std::uint64_t bytes = 64ull << 20;
  std::uint64_t chunk = 1ull << 20;
  std::uint64_t seed = 1;
};

// Writes the pattern chunk by chunk, then reads it back and counts mismatching bytes.
class StreamInitiator : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<StreamInitiator> initiator_socket;

  StreamInitiator(sc_core::sc_module_name name, const StreamPlan& plan, ProgressBar& progress)
      : sc_module(name),
        initiator_socket("initiator_socket"),
        plan_(plan),
        progress_(progress),
        stats_(this->name()),
        transactions_(stats_.counter("transactions", "1", "bulk transactions issued")),
        mismatches_(stats_.counter("mismatched_bytes", "B", "bytes read back that differ")) {
    SC_THREAD(run);
  }

  std::uint64_t mismatches() const { return mismatches_.value(); }
  bool finished() const { return finished_; }

 private:
  SC_HAS_PROCESS(StreamInitiator);

  void run() {
    std::vector<unsigned char> expected(plan_.bytes), buffer(plan_.chunk);
    std::mt19937_64 random(plan_.seed);
    for (auto& b : expected) b = static_cast<unsigned char>(random());
    auto& trace = core::trace_writer();
    const auto track = trace.enabled() ? trace.track(name()) : core::TrackId{};
    for (const auto command : {tlm::TLM_WRITE_COMMAND, tlm::TLM_READ_COMMAND}) {
      const core::TimePs phase_start = core::now_ps();
      for (std::uint64_t offset = 0; offset < plan_.bytes; offset += plan_.chunk) {
        const std::uint64_t len = std::min(plan_.chunk, plan_.bytes - offset);
        if (command == tlm::TLM_WRITE_COMMAND) {
          std::copy_n(expected.begin() + static_cast<long>(offset), len, buffer.begin());
        }
        transfer(command, offset, buffer.data(), len);
        if (command == tlm::TLM_READ_COMMAND) count_mismatches(expected, buffer, offset, len);
        const double done = (command == tlm::TLM_READ_COMMAND ? plan_.bytes : 0) + offset + len;
        progress_.update(done / (2.0 * static_cast<double>(plan_.bytes)));
      }
      if (trace.enabled()) {
        trace.span(track, command == tlm::TLM_WRITE_COMMAND ? "write pattern" : "read back",
                   phase_start, core::now_ps());
      }
    }
    PODSIM_LOG(*this, kInfo, "streamed {} bytes each way, {} mismatched", plan_.bytes,
               mismatches_.value());
    finished_ = true;
  }

  void transfer(tlm::tlm_command command, std::uint64_t address, unsigned char* data,
                std::uint64_t len) {
    tlm::tlm_generic_payload trans;
    trans.set_command(command);
    trans.set_address(address);
    trans.set_data_ptr(data);
    trans.set_data_length(static_cast<unsigned int>(len));
    trans.set_streaming_width(static_cast<unsigned int>(len));
    trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    initiator_socket->b_transport(trans, delay);
    if (trans.is_response_error()) {
      SC_REPORT_ERROR(name(), trans.get_response_string().c_str());
    }
    transactions_.add();
    wait(delay);
  }

  void count_mismatches(const std::vector<unsigned char>& expected,
                        const std::vector<unsigned char>& got, std::uint64_t offset,
                        std::uint64_t len) {
    for (std::uint64_t i = 0; i < len; ++i) {
      if (expected[offset + i] != got[i]) mismatches_.add();
    }
  }

  StreamPlan plan_;
  ProgressBar& progress_;
  core::StatsGroup stats_;
  core::Counter& transactions_;
  core::Counter& mismatches_;
  bool finished_ = false;
};

class SelftestCommand : public Command {
 public:
  explicit SelftestCommand(CLI::App& app) {
    subcommand = app.add_subcommand(
        "selftest",
        "Stream a seeded pattern through a memory with the chip's HBM bandwidth (PCIe for a "
        "host), read it back, and check data and timing");
    subcommand->add_option("--bytes", bytes_text_, "bytes to write and read back")
        ->capture_default_str();
    subcommand->add_option("--chunk", chunk_text_, "bytes per bulk transaction")
        ->capture_default_str();
    subcommand->add_option("--latency", latency_text_, "memory access latency")
        ->capture_default_str();
  }

  bool simulates() const override { return true; }

  int run(const GlobalOptions& options) override {
    const auto system = options.load_system();
    const StreamPlan plan{size_option("--bytes", bytes_text_), size_option("--chunk", chunk_text_),
                          options.seed};
    if (plan.chunk > plan.bytes) throw UsageError("--chunk must not exceed --bytes");
    // The pattern is kept whole in host memory to check it; TLM lengths are 32-bit.
    if (plan.bytes > kMaxBytes) throw UsageError("--bytes must be at most 4GiB");
    if (plan.chunk > kMaxChunk) throw UsageError("--chunk must be at most 1GiB");
    std::string error;
    const auto latency = core::parse_duration(latency_text_, &error);
    if (!latency) throw UsageError("--latency " + latency_text_ + ": " + error);
    if (latency->ps < 0) throw UsageError("--latency " + latency_text_ + ": must not be negative");

    // The memory the chip's NIC would use: HBM, or host memory over PCIe for a host.
    core::MemoryTargetConfig memory = chip::memory_config(system.config.chip, true);
    memory.size = core::ByteSize{std::max(plan.bytes, memory.size.bytes)};
    memory.latency = *latency;
    if (!options.trace_file.empty()) core::trace_writer().open(options.trace_file);

    ProgressBar progress("selftest", !options.quiet);
    core::MemoryTarget target("selftest_memory", memory);
    StreamInitiator initiator("selftest_initiator", plan, progress);
    initiator.initiator_socket.bind(target.target_socket);
    core::run_to_completion(options.lock_step);
    return report(options, plan, memory, initiator);
  }

 private:
  static std::uint64_t size_option(const char* flag, const std::string& text) {
    std::string error;
    const auto size = core::parse_byte_size(text, &error);
    if (!size) throw UsageError(std::string(flag) + " " + text + ": " + error);
    if (size->bytes == 0) throw UsageError(std::string(flag) + " must be greater than zero");
    return size->bytes;
  }

  static int report(const GlobalOptions& options, const StreamPlan& plan,
                    const core::MemoryTargetConfig& memory, const StreamInitiator& initiator) {
    const core::TimePs end = core::now_ps();
    // Each transaction waits for the previous one, so every one pays its transfer and the
    // latency in full.
    std::uint64_t transactions = 0;
    core::TimePs expected = 0;
    for (int pass = 0; pass < 2; ++pass) {
      for (std::uint64_t offset = 0; offset < plan.bytes; offset += plan.chunk) {
        const std::uint64_t len = std::min(plan.chunk, plan.bytes - offset);
        expected +=
            static_cast<core::TimePs>(memory.bandwidth.time_for(len).ps + memory.latency.ps);
        ++transactions;
      }
    }
    const double achieved =
        2.0 * static_cast<double>(plan.bytes) / (static_cast<double>(end) * 1e-12);
    fmt::print("selftest: {} written and read back in {} transactions of {}\n",
               core::to_string(core::ByteSize{plan.bytes}), transactions,
               core::to_string(core::ByteSize{plan.chunk}));
    fmt::print("  simulated time   {} (expected {})\n",
               core::to_string(core::Duration{static_cast<std::int64_t>(end)}),
               core::to_string(core::Duration{static_cast<std::int64_t>(expected)}));
    fmt::print("  bandwidth        {} achieved of {} configured ({:.1f}%)\n",
               core::format_gbytes_per_second(core::Bandwidth{achieved * 8}),
               core::format_gbytes_per_second(memory.bandwidth),
               100 * achieved * 8 / memory.bandwidth.bits_per_second);
    fmt::print("  data             {}\n",
               initiator.mismatches() == 0 ? std::string("ok, every byte matches")
                                           : fmt::format("{} bytes WRONG", initiator.mismatches()));
    if (!options.stats_file.empty()) core::stats_registry().write(options.stats_file, end);
    if (!options.trace_file.empty()) core::trace_writer().close();
    const bool ok = initiator.finished() && initiator.mismatches() == 0 && end == expected;
    if (!options.json_file.empty()) {
      nlohmann::json j = {{"bytes", plan.bytes},
                          {"chunk", plan.chunk},
                          {"sim_time_ps", end},
                          {"expected_time_ps", expected},
                          {"achieved_gbytes_per_second", achieved / 1e9},
                          {"mismatched_bytes", initiator.mismatches()},
                          {"ok", ok}};
      write_output_file(options.json_file, j.dump(2) + "\n");
    }
    if (end != expected)
      fmt::print("  timing           MISMATCH: simulated time differs from the model\n");
    return ok ? 0 : 1;
  }

  static constexpr std::uint64_t kMaxBytes = 4ull << 30, kMaxChunk = 1ull << 30;
  std::string bytes_text_ = "64MiB";
  std::string chunk_text_ = "1MiB";
  std::string latency_text_ = "100ns";
};

}  // namespace

std::unique_ptr<Command> add_selftest_command(CLI::App& app) {
  return std::make_unique<SelftestCommand>(app);
}

}  // namespace podsim::sims
