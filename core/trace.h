// A Chrome/Perfetto JSON timeline writer: one track (thread) per module instance, grouped into
// processes by parent path, with complete spans, counters and instants in simulated time.
// Captures: exact picosecond timestamps (printed as decimal microseconds), streamed to disk in
// bounded chunks so a long run does not hold its trace in memory, and a file that appears only
// when complete. Ignores: flow arrows, async spans and sorting (viewers sort by timestamp).
#pragma once

#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.h"

namespace podsim::core {

// A timeline row. tids are unique across the whole trace (Perfetto keys threads by tid alone in
// some paths), and 0 is never a valid tid, so a default TrackId is recognisably unset.
struct TrackId {
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  friend bool operator==(TrackId a, TrackId b) { return a.pid == b.pid && a.tid == b.tid; }
  friend bool operator!=(TrackId a, TrackId b) { return !(a == b); }
};

// Picoseconds as exact decimal microseconds with six fractional digits: 1234567 -> "1.234567".
std::string format_microseconds(TimePs ps);
void append_microseconds(std::string& out, TimePs ps);

class TraceWriter {
 public:
  TraceWriter() = default;
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;
  // Closes the trace if still open; an error at that point is reported on stderr, not thrown.
  ~TraceWriter();

  // Starts writing to path + ".tmp"; close() renames it to `path`. Throws std::runtime_error
  // naming the file if it cannot be created, std::logic_error if a trace is already open.
  void open(const std::string& path);
  bool enabled() const { return enabled_; }

  // The track of a module instance, created on first use. Tracks may be created before open()
  // (modules do so at elaboration); their names are written when the trace opens.
  TrackId track(std::string_view hierarchical_name);

  // Events are ignored, unchecked, while no trace is open; callers on a hot path should still
  // test enabled() first to skip building names and arguments.
  // A complete event from `start` to `end` (end >= start, else std::invalid_argument).
  void span(TrackId track, std::string_view name, TimePs start, TimePs end);
  // As above with arguments shown in the viewer; `args` must be a JSON object.
  void span(TrackId track, std::string_view name, TimePs start, TimePs end,
            const nlohmann::json& args);
  // Chrome counters belong to a process, so the name is qualified by the track's own name
  // ("hbm1.queue_depth") to keep sibling modules' counters apart.
  void counter(TrackId track, std::string_view name, TimePs t, double value);
  void instant(TrackId track, std::string_view name, TimePs t);

  // Finishes the JSON and renames the temporary file into place. Throws std::runtime_error
  // naming the file on an I/O failure (the temporary file is removed). No-op when not open.
  // Close hooks run first, so modules holding events back (BusySpans) write them.
  void close();
  using CloseHook = std::function<void()>;
  std::uint64_t add_close_hook(CloseHook hook);
  void remove_close_hook(std::uint64_t id);

 private:
  struct Thread {
    std::uint32_t pid;
    std::string name;  // last segment of the hierarchical name
  };

  void write_metadata(std::string_view kind, std::uint32_t pid, std::uint32_t tid,
                      std::string_view name);
  void begin_event(char phase, TrackId track, std::string_view name, TimePs t);
  void end_event();
  const Thread& thread_of(TrackId track) const;
  void flush();
  [[noreturn]] void fail(const std::string& what);

  bool enabled_ = false;
  bool first_event_ = true;
  std::string path_;
  std::ofstream out_;
  std::string buffer_;
  std::map<std::string, TrackId, std::less<>> tracks_;
  std::map<std::string, std::uint32_t, std::less<>> processes_;
  std::vector<std::string> process_names_;  // indexed by pid - 1
  std::vector<Thread> threads_;             // indexed by tid - 1
  std::map<std::uint64_t, CloseHook> close_hooks_;
  std::uint64_t next_hook_ = 1;
};

// Activity on one track merged into busy spans: a stream of small transfers (an HBM channel's
// chunks) reads as one bar per busy period rather than millions of slivers. A transfer that
// starts no later than the open span ends extends it; any other starts a new span. Transfers
// arrive out of time order (initiators run ahead of each other), so a late one merges into the
// open span, which never reaches back before the last span written: spans never overlap. The
// open span is written by flush(), which its owner calls from a close hook.
class BusySpans {
 public:
  BusySpans(TraceWriter& writer, TrackId track) : writer_(writer), track_(track) {}
  void add(TimePs start, TimePs end, std::uint64_t read_bytes, std::uint64_t written_bytes);
  void flush();

 private:
  TraceWriter& writer_;
  TrackId track_;
  bool open_ = false;
  TimePs start_ = 0, end_ = 0, written_end_ = 0;
  std::uint64_t read_ = 0, written_ = 0;
};

// The trace of this process (one SystemC kernel per process).
TraceWriter& trace_writer();

}  // namespace podsim::core
