#include "tests/support/chrome_trace_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <utility>

namespace podsim::test {
namespace {

using nlohmann::json;
using ThreadKey = std::pair<std::int64_t, std::int64_t>;  // (pid, tid)

// Timestamps are parsed into doubles, so a span that ends exactly where the next begins can come
// out a few ulps long; a tenth of a picosecond is far below anything a writer means.
constexpr double kTimeSlackUs = 1e-7;

const std::set<std::string> kPhases = {"B", "E", "X", "i", "I", "C", "M", "b", "e",
                                       "n", "s", "t", "f", "P", "O", "N", "D", "R"};

struct Span {
  double ts;
  double end;
  std::size_t index;
};

struct Edge {
  double ts;
  int delta;  // +1 for B, -1 for E
  std::size_t index;
};

std::string string_field(const json& event, const char* field, const std::string& otherwise) {
  const auto it = event.find(field);
  return it != event.end() && it->is_string() ? it->get<std::string>() : otherwise;
}

class Checker {
 public:
  std::vector<std::string> run(const json& trace) {
    if (!trace.is_object()) return {"trace is not a JSON object"};
    if (trace.contains("displayTimeUnit") && trace["displayTimeUnit"] != "ns" &&
        trace["displayTimeUnit"] != "ms") {
      problems_.push_back("displayTimeUnit must be \"ns\" or \"ms\"");
    }
    const auto events = trace.find("traceEvents");
    if (events == trace.end() || !events->is_array()) {
      problems_.push_back("trace has no \"traceEvents\" array");
      return problems_;
    }
    for (std::size_t i = 0; i < events->size(); ++i) check_event(i, (*events)[i]);
    check_balance();
    check_nesting();
    check_names();
    return problems_;
  }

 private:
  void problem(std::size_t index, const json& event, const std::string& what) {
    const std::string ph = string_field(event, "ph", "?");
    const std::string name = string_field(event, "name", "?");
    problems_.push_back(fmt::format("event {} (ph '{}', name '{}'): {}", index, ph, name, what));
  }

  void check_event(std::size_t index, const json& event) {
    if (!event.is_object()) {
      problems_.push_back(fmt::format("event {} is not an object", index));
      return;
    }
    if (!event.contains("ph") || !event["ph"].is_string()) {
      problem(index, event, "no string \"ph\"");
      return;
    }
    const std::string ph = event["ph"].get<std::string>();
    if (kPhases.count(ph) == 0) {
      problem(index, event, "unknown phase");
      return;
    }
    const bool pid_ok = check_id(index, event, "pid");
    const bool tid_ok = check_id(index, event, "tid");
    const bool ids_ok = pid_ok && tid_ok;
    if (ph == "M") {
      check_metadata(index, event, ids_ok);
      return;
    }
    if (ph != "E" && !(event.contains("name") && event["name"].is_string())) {
      problem(index, event, "no string \"name\"");
    }
    const auto ts = event.find("ts");
    const bool ts_ok = ts != event.end() && ts->is_number() && ts->get<double>() >= 0;
    if (!ts_ok) problem(index, event, "\"ts\" must be a non-negative number");
    if (!ids_ok) return;
    const ThreadKey key{event["pid"].get<std::int64_t>(), event["tid"].get<std::int64_t>()};
    used_.emplace(key, index);
    check_phase(index, event, ph, key, ts_ok ? ts->get<double>() : -1);
  }

  bool check_id(std::size_t index, const json& event, const char* field) {
    if (event.contains(field) && event[field].is_number_integer()) return true;
    problem(index, event, fmt::format("\"{}\" must be an integer", field));
    return false;
  }

  void check_metadata(std::size_t index, const json& event, bool ids_ok) {
    const std::string name = string_field(event, "name", "");
    if (name != "process_name" && name != "thread_name") {
      problem(index, event, "metadata must be process_name or thread_name");
      return;
    }
    const auto args = event.find("args");
    if (args == event.end() || !args->is_object() || !args->contains("name") ||
        !(*args)["name"].is_string()) {
      problem(index, event, "metadata needs a string args.name");
      return;
    }
    if (!ids_ok) return;
    const auto pid = event["pid"].get<std::int64_t>();
    if (name == "process_name") named_processes_.insert(pid);
    if (name == "thread_name") named_threads_.insert({pid, event["tid"].get<std::int64_t>()});
  }

  void check_phase(std::size_t index, const json& event, const std::string& ph,
                   const ThreadKey& key, double ts) {
    if (ph == "X") {
      const auto dur = event.find("dur");
      if (dur == event.end() || !dur->is_number() || dur->get<double>() < 0) {
        problem(index, event, "\"dur\" must be a non-negative number");
      } else if (ts >= 0) {
        spans_[key].push_back(Span{ts, ts + dur->get<double>(), index});
      }
    } else if (ph == "C") {
      check_counter_args(index, event);
    } else if ((ph == "B" || ph == "E") && ts >= 0) {
      edges_[key].push_back(Edge{ts, ph == "B" ? 1 : -1, index});
    } else if ((ph == "i" || ph == "I") && event.contains("s") && event["s"] != "g" &&
               event["s"] != "p" && event["s"] != "t") {
      problem(index, event, "instant scope \"s\" must be \"g\", \"p\" or \"t\"");
    }
  }

  void check_counter_args(std::size_t index, const json& event) {
    const auto args = event.find("args");
    if (args == event.end() || !args->is_object() || args->empty()) {
      problem(index, event, "counter needs a non-empty \"args\" object");
      return;
    }
    for (const auto& [key, value] : args->items()) {
      if (!value.is_number()) problem(index, event, "counter arg '" + key + "' is not a number");
    }
  }

  void check_balance() {
    for (auto& [key, edges] : edges_) {
      std::stable_sort(edges.begin(), edges.end(),
                       [](const Edge& a, const Edge& b) { return a.ts < b.ts; });
      int depth = 0;
      for (const Edge& edge : edges) {
        depth += edge.delta;
        if (depth < 0) {
          problems_.push_back(fmt::format("event {}: E without a matching B on pid {} tid {}",
                                          edge.index, key.first, key.second));
          depth = 0;
        }
      }
      if (depth > 0) {
        problems_.push_back(fmt::format("{} B event(s) never ended on pid {} tid {}", depth,
                                        key.first, key.second));
      }
    }
  }

  // Perfetto keeps a thread's slices in a stack: spans on one track must nest, not overlap.
  void check_nesting() {
    for (auto& [key, spans] : spans_) {
      std::stable_sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
        return a.ts != b.ts ? a.ts < b.ts : a.end > b.end;
      });
      std::vector<const Span*> open;
      for (const Span& span : spans) {
        while (!open.empty() && open.back()->end <= span.ts + kTimeSlackUs) open.pop_back();
        if (!open.empty() && span.end > open.back()->end + kTimeSlackUs) {
          problems_.push_back(fmt::format(
              "event {}: X span overlaps event {} on pid {} tid {} without nesting inside it",
              span.index, open.back()->index, key.first, key.second));
        }
        open.push_back(&span);
      }
    }
  }

  void check_names() {
    std::set<std::int64_t> reported;
    for (const auto& [key, index] : used_) {
      if (named_processes_.count(key.first) == 0 && reported.insert(key.first).second) {
        problems_.push_back(
            fmt::format("event {}: pid {} has no process_name metadata", index, key.first));
      }
      if (named_threads_.count(key) == 0) {
        problems_.push_back(fmt::format("event {}: pid {} tid {} has no thread_name metadata",
                                        index, key.first, key.second));
      }
    }
  }

  std::vector<std::string> problems_;
  std::set<std::int64_t> named_processes_;
  std::set<ThreadKey> named_threads_;
  std::map<ThreadKey, std::size_t> used_;  // first event on each thread
  std::map<ThreadKey, std::vector<Span>> spans_;
  std::map<ThreadKey, std::vector<Edge>> edges_;
};

}  // namespace

std::vector<std::string> check_chrome_trace(const nlohmann::json& trace) {
  return Checker().run(trace);
}

}  // namespace podsim::test
