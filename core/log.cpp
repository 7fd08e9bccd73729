#include "core/log.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>

#include "core/trace.h"

namespace podsim::core {
namespace {

constexpr std::string_view kLevelNames[] = {"error", "warning", "info", "debug", "trace"};

// Filtering is ours, per module; SystemC's verbosity is one global ceiling and cannot say
// "debug for hbm only". Info, debug and trace are still reported at SC_MEDIUM, SC_HIGH and
// SC_DEBUG so that the report itself carries its level to any handler or log file.
int verbosity_of(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return sc_core::SC_HIGH;
    case LogLevel::kTrace:
      return sc_core::SC_DEBUG;
    default:
      return sc_core::SC_MEDIUM;
  }
}

struct LogState {
  LogLevels levels;
  // Module names repeat on every call, so each is matched against the patterns once.
  std::map<std::string, LogLevel, std::less<>> cache;
  std::uint64_t warnings = 0;
  std::uint64_t errors = 0;
};

LogState& state() {
  static LogState s;
  return s;
}

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

bool segment_matches(std::string_view pattern, std::string_view segment) {
  if (segment == pattern) return true;
  const auto last = segment.find_last_not_of("0123456789");
  return last != std::string_view::npos && segment.substr(0, last + 1) == pattern;
}

bool pattern_matches(std::string_view pattern, std::string_view name) {
  if (name == pattern) return true;
  if (name.size() > pattern.size() && name.compare(0, pattern.size(), pattern) == 0 &&
      name[pattern.size()] == '.') {
    return true;
  }
  if (pattern.find('.') != std::string_view::npos) return false;
  for (std::size_t start = 0; start <= name.size();) {
    const auto dot = std::min(name.find('.', start), name.size());
    if (segment_matches(pattern, name.substr(start, dot - start))) return true;
    start = dot + 1;
  }
  return false;
}

bool valid_pattern(std::string_view pattern) {
  return !pattern.empty() && pattern.front() != '.' && pattern.back() != '.' &&
         pattern.find("..") == std::string_view::npos &&
         pattern.find_first_of(" \t") == std::string_view::npos;
}

std::string spec_error(std::string_view spec, std::string_view token, std::string_view why) {
  return fmt::format(
      "bad log spec '{}': {} in '{}' (expected LEVEL or MODULE=LEVEL, comma-separated; valid "
      "levels: error, warning, info, debug, trace)",
      spec, why, token);
}

// Parses one comma-separated entry into `levels`, or returns why it is wrong.
std::optional<std::string> parse_entry(std::string_view token, LogLevels& levels) {
  const auto equals = token.find('=');
  const std::string_view level_text =
      equals == std::string_view::npos ? token : trim(token.substr(equals + 1));
  const auto level = parse_log_level(level_text);
  if (!level) return fmt::format("unknown level '{}'", level_text);
  if (equals == std::string_view::npos) {
    levels.default_level = *level;
    return std::nullopt;
  }
  const std::string_view pattern = trim(token.substr(0, equals));
  if (!valid_pattern(pattern)) return fmt::format("bad module name '{}'", pattern);
  levels.modules.emplace_back(std::string(pattern), *level);
  return std::nullopt;
}

const char* level_name(const sc_core::sc_report& report) {
  switch (report.get_severity()) {
    case sc_core::SC_INFO:
      if (report.get_verbosity() >= sc_core::SC_DEBUG) return "trace";
      return report.get_verbosity() >= sc_core::SC_HIGH ? "debug" : "info";
    case sc_core::SC_WARNING:
      return "warning";
    case sc_core::SC_ERROR:
      return "error";
    default:
      return "fatal";
  }
}

void handle_report(const sc_core::sc_report& report, const sc_core::sc_actions& actions) {
  if (report.get_severity() == sc_core::SC_WARNING) ++state().warnings;
  if (report.get_severity() >= sc_core::SC_ERROR) ++state().errors;
  if (actions & sc_core::SC_DISPLAY) {
    fmt::print(stderr, "{} us {} {}: {}\n", format_microseconds(report.get_time().value()),
               level_name(report), report.get_msg_type(), report.get_msg());
  }
  sc_core::sc_report_handler::default_handler(report, actions & ~sc_core::SC_DISPLAY);
}

}  // namespace

std::string_view to_string(LogLevel level) { return kLevelNames[static_cast<int>(level)]; }

std::optional<LogLevel> parse_log_level(std::string_view text) {
  for (std::size_t i = 0; i < std::size(kLevelNames); ++i) {
    if (text == kLevelNames[i]) return static_cast<LogLevel>(i);
  }
  return std::nullopt;
}

LogLevel LogLevels::level_for(std::string_view name) const {
  LogLevel level = default_level;
  std::size_t best = 0;
  bool matched = false;
  for (const auto& [pattern, pattern_level] : modules) {
    if ((!matched || pattern.size() >= best) && pattern_matches(pattern, name)) {
      level = pattern_level;
      best = pattern.size();
      matched = true;
    }
  }
  return level;
}

std::optional<LogLevels> parse_log_spec(std::string_view spec, std::string* error) {
  LogLevels levels;
  std::optional<std::string> problem;
  std::string_view bad_token = spec;
  if (trim(spec).empty()) problem = "no entries";
  for (std::size_t start = 0; !problem && start <= spec.size();) {
    const auto comma = std::min(spec.find(',', start), spec.size());
    bad_token = trim(spec.substr(start, comma - start));
    problem = bad_token.empty() ? std::optional<std::string>("empty entry")
                                : parse_entry(bad_token, levels);
    start = comma + 1;
  }
  if (!problem) return levels;
  if (error) *error = spec_error(spec, bad_token, *problem);
  return std::nullopt;
}

void set_log_levels(const LogLevels& levels) {
  LogState& s = state();
  s.levels = levels;
  s.cache.clear();
  LogLevel least = levels.default_level;
  LogLevel most = levels.default_level;
  for (const auto& entry : levels.modules) {
    least = std::min(least, entry.second);
    most = std::max(most, entry.second);
  }
  detail::least_verbose_level = least;
  detail::most_verbose_level = most;
  // SystemC drops info reports above its global ceiling before any handler sees them.
  const int needed = verbosity_of(most);
  if (sc_core::sc_report_handler::get_verbosity_level() < needed) {
    sc_core::sc_report_handler::set_verbosity_level(needed);
  }
}

LogLevel log_level_for(std::string_view name) {
  LogState& s = state();
  if (auto it = s.cache.find(name); it != s.cache.end()) return it->second;
  const LogLevel level = s.levels.level_for(name);
  s.cache.emplace(std::string(name), level);
  return level;
}

namespace detail {

void report(const sc_core::sc_object& obj, LogLevel level, const std::string& message,
            const char* file, int line) {
  using sc_core::sc_report_handler;
  switch (level) {
    case LogLevel::kError:
      sc_report_handler::report(sc_core::SC_ERROR, obj.name(), message.c_str(), file, line);
      break;
    case LogLevel::kWarning:
      sc_report_handler::report(sc_core::SC_WARNING, obj.name(), message.c_str(), file, line);
      break;
    default:
      sc_report_handler::report(sc_core::SC_INFO, obj.name(), message.c_str(), verbosity_of(level),
                                file, line);
  }
}

}  // namespace detail

void install_report_handler() { sc_core::sc_report_handler::set_handler(handle_report); }

std::uint64_t warning_count() { return state().warnings; }
std::uint64_t error_count() { return state().errors; }

void reset_report_counts() {
  state().warnings = 0;
  state().errors = 0;
}

}  // namespace podsim::core
