#include "core/trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <stdexcept>

namespace podsim::core {
namespace {

// Large enough that a write call is rare next to the events it carries, small enough that a
// trace of any length costs a fixed amount of memory.
constexpr std::size_t kFlushBytes = 256 * 1024;

constexpr TimePs kPsPerUs = 1'000'000;

bool needs_escaping(std::string_view text) {
  for (char c : text) {
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20 ||
        static_cast<unsigned char>(c) >= 0x80) {
      return true;
    }
  }
  return false;
}

// Most names are plain identifiers; only the rest pay for nlohmann's escaping (which also
// replaces invalid UTF-8 instead of throwing mid-run).
void append_json_string(std::string& out, std::string_view text) {
  if (!needs_escaping(text)) {
    out += '"';
    out += text;
    out += '"';
    return;
  }
  out += nlohmann::json(std::string(text))
             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string_view parent_path(std::string_view name) {
  const auto dot = name.rfind('.');
  return dot == std::string_view::npos ? name : name.substr(0, dot);
}

std::string_view leaf_name(std::string_view name) {
  const auto dot = name.rfind('.');
  return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

}  // namespace

void append_microseconds(std::string& out, TimePs ps) {
  fmt::format_to(std::back_inserter(out), "{}.{:06}", ps / kPsPerUs, ps % kPsPerUs);
}

std::string format_microseconds(TimePs ps) {
  std::string out;
  append_microseconds(out, ps);
  return out;
}

TraceWriter::~TraceWriter() {
  try {
    close();
  } catch (const std::exception& e) {
    std::cerr << e.what() << '\n';
  }
}

void TraceWriter::open(const std::string& path) {
  if (enabled_) throw std::logic_error("trace " + path_ + " is already open");
  path_ = path;
  out_.open(path + ".tmp", std::ios::binary | std::ios::trunc);
  if (!out_) {
    throw std::runtime_error("cannot create trace file " + path + ": " + std::strerror(errno));
  }
  enabled_ = true;
  first_event_ = true;
  buffer_ = "{\"traceEvents\":[\n";
  for (std::size_t i = 0; i < process_names_.size(); ++i) {
    write_metadata("process_name", static_cast<std::uint32_t>(i + 1), 0, process_names_[i]);
  }
  for (std::size_t i = 0; i < threads_.size(); ++i) {
    write_metadata("thread_name", threads_[i].pid, static_cast<std::uint32_t>(i + 1),
                   threads_[i].name);
  }
}

TrackId TraceWriter::track(std::string_view hierarchical_name) {
  if (auto it = tracks_.find(hierarchical_name); it != tracks_.end()) return it->second;
  const std::string_view process = parent_path(hierarchical_name);
  auto [pit, new_process] =
      processes_.try_emplace(std::string(process), static_cast<std::uint32_t>(0));
  if (new_process) {
    process_names_.emplace_back(process);
    pit->second = static_cast<std::uint32_t>(process_names_.size());
    if (enabled_) write_metadata("process_name", pit->second, 0, process);
  }
  threads_.push_back(Thread{pit->second, std::string(leaf_name(hierarchical_name))});
  const TrackId id{pit->second, static_cast<std::uint32_t>(threads_.size())};
  tracks_.emplace(std::string(hierarchical_name), id);
  if (enabled_) write_metadata("thread_name", id.pid, id.tid, threads_.back().name);
  return id;
}

void TraceWriter::span(TrackId track, std::string_view name, TimePs start, TimePs end) {
  span(track, name, start, end, nlohmann::json());
}

void TraceWriter::span(TrackId track, std::string_view name, TimePs start, TimePs end,
                       const nlohmann::json& args) {
  if (!enabled_) return;
  if (end < start) {
    throw std::invalid_argument(
        fmt::format("trace span '{}' on '{}' ends before it starts", name, thread_of(track).name));
  }
  if (!args.is_null() && !args.is_object()) {
    throw std::invalid_argument(fmt::format("trace span '{}' args must be a JSON object", name));
  }
  begin_event('X', track, name, start);
  buffer_ += ",\"dur\":";
  append_microseconds(buffer_, end - start);
  if (args.is_object()) {
    buffer_ += ",\"args\":";
    buffer_ += args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  end_event();
}

void TraceWriter::counter(TrackId track, std::string_view name, TimePs t, double value) {
  if (!enabled_) return;
  const std::string qualified = thread_of(track).name + "." + std::string(name);
  begin_event('C', track, qualified, t);
  buffer_ += ",\"args\":{\"value\":";
  // nlohmann prints the shortest text that round-trips, and null (not "nan") for non-finite.
  buffer_ += nlohmann::json(value).dump();
  buffer_ += '}';
  end_event();
}

void TraceWriter::instant(TrackId track, std::string_view name, TimePs t) {
  if (!enabled_) return;
  begin_event('i', track, name, t);
  buffer_ += ",\"s\":\"t\"";
  end_event();
}

std::uint64_t TraceWriter::add_close_hook(CloseHook hook) {
  close_hooks_.emplace(next_hook_, std::move(hook));
  return next_hook_++;
}

void TraceWriter::remove_close_hook(std::uint64_t id) { close_hooks_.erase(id); }

void TraceWriter::close() {
  if (!enabled_) return;
  for (auto& [id, hook] : close_hooks_) hook();
  buffer_ += "\n],\"displayTimeUnit\":\"ns\"}\n";
  flush();
  out_.close();
  if (!out_) fail("cannot write trace file " + path_ + ": " + std::strerror(errno));
  std::error_code error;
  std::filesystem::rename(path_ + ".tmp", path_, error);
  if (error) fail("cannot write trace file " + path_ + ": " + error.message());
  enabled_ = false;
}

void TraceWriter::write_metadata(std::string_view kind, std::uint32_t pid, std::uint32_t tid,
                                 std::string_view name) {
  buffer_ += first_event_ ? "" : ",\n";
  first_event_ = false;
  fmt::format_to(std::back_inserter(buffer_),
                 "{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"{}\"", pid, tid, kind);
  buffer_ += ",\"args\":{\"name\":";
  append_json_string(buffer_, name);
  buffer_ += "}}";
  if (buffer_.size() >= kFlushBytes) flush();
}

void TraceWriter::begin_event(char phase, TrackId track, std::string_view name, TimePs t) {
  thread_of(track);  // rejects a track this writer never handed out
  buffer_ += first_event_ ? "" : ",\n";
  first_event_ = false;
  fmt::format_to(std::back_inserter(buffer_),
                 "{{\"ph\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":", phase, track.pid, track.tid);
  append_microseconds(buffer_, t);
  buffer_ += ",\"name\":";
  append_json_string(buffer_, name);
}

void TraceWriter::end_event() {
  buffer_ += '}';
  if (buffer_.size() >= kFlushBytes) flush();
}

const TraceWriter::Thread& TraceWriter::thread_of(TrackId track) const {
  if (track.tid == 0 || track.tid > threads_.size() || threads_[track.tid - 1].pid != track.pid) {
    throw std::invalid_argument(
        fmt::format("unknown trace track (pid {}, tid {})", track.pid, track.tid));
  }
  return threads_[track.tid - 1];
}

void TraceWriter::flush() {
  out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  buffer_.clear();
  if (!out_) fail("cannot write trace file " + path_ + ": " + std::strerror(errno));
}

void TraceWriter::fail(const std::string& what) {
  enabled_ = false;
  buffer_.clear();
  out_.close();
  std::error_code ignored;
  std::filesystem::remove(path_ + ".tmp", ignored);
  throw std::runtime_error(what);
}

TraceWriter& trace_writer() {
  static TraceWriter writer;
  return writer;
}

}  // namespace podsim::core

namespace podsim::core {

void BusySpans::add(TimePs start, TimePs end, std::uint64_t read_bytes,
                    std::uint64_t written_bytes) {
  if (open_ && start <= end_) {
    start_ = std::max(std::min(start_, start), written_end_);
    end_ = std::max(end_, end);
  } else {
    flush();
    open_ = true;
    start_ = std::max(start, written_end_);
    end_ = std::max(end, start_);
  }
  read_ += read_bytes;
  written_ += written_bytes;
}

void BusySpans::flush() {
  if (!open_) return;
  writer_.span(track_, "busy", start_, end_, {{"bytes_read", read_}, {"bytes_written", written_}});
  written_end_ = end_;
  open_ = false;
  read_ = written_ = 0;
}

}  // namespace podsim::core
