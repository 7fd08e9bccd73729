// Logging for models: messages go through SystemC's report handler (so SystemC's actions, limits
// and error throwing still apply) with a level chosen per module by a spec such as
// "hbm=debug,fabric=trace,warning".
// Captures: per-module levels matched by hierarchical name, prefix or instance family ("hbm"
// matches "system.chip0.hbm1"), one stderr line per report with simulated time, and counts of
// warnings and errors. Ignores: log files and rotation, and thread safety (one SystemC kernel
// runs on one thread).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <systemc>
#include <utility>
#include <vector>

namespace podsim::core {

// Ordered from least to most verbose: a module at level L shows every message at or below L.
enum class LogLevel { kError, kWarning, kInfo, kDebug, kTrace };

std::string_view to_string(LogLevel level);
std::optional<LogLevel> parse_log_level(std::string_view text);

struct LogLevels {
  // Quiet by default: a run of a thousand chips should not print a line per module.
  LogLevel default_level = LogLevel::kWarning;
  // (pattern, level) in spec order.
  std::vector<std::pair<std::string, LogLevel>> modules;

  // The level of a module: the longest matching pattern wins (the later one on a tie); a
  // pattern matches the full name, a dotted prefix of it ("system.chip0" matches
  // "system.chip0.hbm1"), or any segment of it as written or with trailing digits stripped
  // ("hbm" and "hbm1" both match "system.chip0.hbm1").
  LogLevel level_for(std::string_view name) const;
};

// Parses "level", "pattern=level" and comma-separated lists of them (a bare level sets the
// default). On a bad spec returns nullopt and, if `error` is given, says which token is wrong and
// lists the valid levels.
std::optional<LogLevels> parse_log_spec(std::string_view spec, std::string* error = nullptr);

// The levels of this process; replaces the previous ones and forgets cached lookups.
void set_log_levels(const LogLevels& levels);
LogLevel log_level_for(std::string_view name);

namespace detail {
// Bounds over every configured level, so most calls decide without looking up the module.
inline LogLevel least_verbose_level = LogLevel::kWarning;
inline LogLevel most_verbose_level = LogLevel::kWarning;

void report(const sc_core::sc_object& obj, LogLevel level, const std::string& message,
            const char* file, int line);
}  // namespace detail

inline bool log_enabled(const sc_core::sc_object& obj, LogLevel level) {
  if (level <= detail::least_verbose_level) return true;
  if (level > detail::most_verbose_level) return false;
  return level <= log_level_for(obj.name());
}

// Replaces SystemC's handler with one that prints "<time> us <level> <module>: <message>" on
// stderr (stdout is kept for results) and counts warnings and errors, then leaves every other
// action (log file, throw on error, stop, abort) to SystemC's default handler.
void install_report_handler();
std::uint64_t warning_count();
std::uint64_t error_count();  // errors and fatals
void reset_report_counts();

}  // namespace podsim::core

// PODSIM_LOG(*this, kDebug, "read {} bytes at {:#x}", size, address): reports with the object's
// hierarchical name as message type. The arguments are not even formatted when the level is off.
#define PODSIM_LOG(obj, level, ...)                                                        \
  do {                                                                                     \
    const ::sc_core::sc_object& podsim_log_object = (obj);                                 \
    if (::podsim::core::log_enabled(podsim_log_object, ::podsim::core::LogLevel::level)) { \
      ::podsim::core::detail::report(podsim_log_object, ::podsim::core::LogLevel::level,   \
                                     ::fmt::format(__VA_ARGS__), __FILE__, __LINE__);      \
    }                                                                                      \
  } while (false)
