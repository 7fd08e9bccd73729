// The stats registry every module reports into: counters, accumulators, histograms and
// time-weighted levels (utilization, queue depth), named by the SystemC hierarchy, written at the
// end of a run as JSON or CSV.
// Captures: exact counts, min/max/mean, bucketed distributions with percentile estimates, and
// time-weighted averages over simulated time. Ignores: sampling over intervals (a whole-run
// summary only); per-interval series belong in the trace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/units.h"

namespace podsim::core {

class Counter {
 public:
  void add(std::uint64_t n = 1) { value_ += n; }
  std::uint64_t value() const { return value_; }

 private:
  friend class StatsRegistry;  // its raw export and merge (parallel runs)
  std::uint64_t value_ = 0;
};

// Count, sum, min, max and mean of sampled values.
class Accumulator {
 public:
  void sample(double v);
  std::uint64_t count() const { return count_; }
  double sum() const { return sum_; }
  double min() const { return count_ ? min_ : 0.0; }
  double max() const { return count_ ? max_ : 0.0; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }

 private:
  friend class StatsRegistry;  // its raw export and merge (parallel runs)
  std::uint64_t count_ = 0;
  double sum_ = 0, min_ = 0, max_ = 0;
};

// Samples counted into buckets with fixed upper bounds (plus an overflow bucket).
class Histogram {
 public:
  // Bounds must be non-empty and strictly increasing (std::invalid_argument otherwise).
  explicit Histogram(std::vector<double> upper_bounds);
  static Histogram linear(double first_bound, double width, std::size_t buckets);
  static Histogram exponential(double first_bound, double factor, std::size_t buckets);
  void sample(double v);
  const std::vector<double>& upper_bounds() const { return bounds_; }
  // counts()[i] counts samples <= upper_bounds()[i] and above the previous bound; the last entry
  // counts samples above every bound.
  const std::vector<std::uint64_t>& counts() const { return counts_; }
  const Accumulator& summary() const { return summary_; }
  // Estimate of the p-th percentile (0..100), interpolated inside the bucket that holds it.
  double percentile(double p) const;

 private:
  friend class StatsRegistry;  // its raw export and merge (parallel runs)
  std::vector<double> bounds_;
  std::vector<std::uint64_t> counts_;
  Accumulator summary_;
};

// A level that holds between changes (busy 0/1, queue depth), averaged over simulated time.
class TimeWeighted {
 public:
  void set(double level, TimePs now);
  void busy(TimePs now) { set(1.0, now); }
  void idle(TimePs now) { set(0.0, now); }
  double level() const { return level_; }
  double max() const { return max_; }
  // Average of the level from time 0 to `now`.
  double average(TimePs now) const;

 private:
  friend class StatsRegistry;  // its raw export and merge (parallel runs)
  double level_ = 0, max_ = 0;
  TimePs since_ = 0;
  long double area_ = 0;  // level x ps, accumulated up to since_
};

// Owns every statistic of a run. References returned by the factory methods stay valid for the
// registry's lifetime. Names are full hierarchical paths ("system.chip0.hbm.bytes_read").
class StatsRegistry {
 public:
  Counter& counter(const std::string& name, std::string unit, std::string description);
  Accumulator& accumulator(const std::string& name, std::string unit, std::string description);
  Histogram& histogram(const std::string& name, Histogram shape, std::string unit,
                       std::string description);
  TimeWeighted& time_weighted(const std::string& name, std::string unit, std::string description);
  // Registers a counter that lives in a module's own state, beside what it counts, so that the
  // per-packet path touches one cache line instead of two. The owner must call forget() with its
  // prefix before the counter dies.
  void attach(const std::string& name, Counter& counter, std::string unit, std::string description);
  // Drops every statistic named "<prefix>." or below.
  void forget(const std::string& prefix);

  bool contains(const std::string& name) const { return entries_.count(name) != 0; }
  std::size_t size() const { return entries_.size(); }

  // Every statistic, sorted by name, evaluated at simulated time `end`.
  nlohmann::json to_json(TimePs end) const;
  std::string to_csv(TimePs end) const;
  // Writes JSON (.json) or CSV (.csv) by the file's extension, through a temporary file that is
  // renamed into place, so a failed write leaves nothing half-written. Throws std::runtime_error
  // naming the file on an unknown extension or an I/O failure.
  void write(const std::string& path, TimePs end) const;

  // Every statistic's exact state as bytes, and those of another process's registry added in:
  // counts and sums add, extremes combine, statistics this registry lacks are made. A parallel
  // run's processes each count only what they simulate, so rank 0 merging the others' holds what
  // one process would have counted.
  std::string export_raw() const;
  void merge_raw(const std::string& raw);

  // Every counter's value, in name order. A stretch of simulation replayed rather than simulated
  // (training/collective_replay.h) counts again what it counted: add_counted() adds after[i] -
  // before[i] to the i-th counter. Throws std::invalid_argument when the counters are no longer
  // those the values were taken of.
  std::vector<std::uint64_t> counter_values() const;
  void add_counted(const std::vector<std::uint64_t>& before,
                   const std::vector<std::uint64_t>& after);

  void clear();

 private:
  enum class Kind { kCounter, kAccumulator, kHistogram, kTimeWeighted };
  // The unit and description are shared with every other statistic of the same text (each
  // chip's NIC repeats the same few hundred): 1024 coarse chips register about 520 thousand.
  struct Entry {
    Kind kind;
    const std::string* unit;
    const std::string* description;
    void* stat;
  };
  const std::string* text(std::string s) { return &*texts_.insert(std::move(s)).first; }
  Entry& add(const std::string& name, Kind kind, std::string unit, std::string description);
  // The counters in name order, rebuilt after a statistic comes or goes: a replayed stretch of
  // simulation reads and adds every counter at once.
  const std::vector<Counter*>& counter_list() const;

  std::unordered_set<std::string> texts_;  // node-based: the entries' pointers stay valid
  std::map<std::string, Entry> entries_;
  std::deque<Counter> counters_;
  std::deque<Accumulator> accumulators_;
  std::deque<Histogram> histograms_;
  std::deque<TimeWeighted> time_weighted_;
  mutable std::vector<Counter*> counter_list_;
  mutable bool counter_list_stale_ = true;
};

// The registry of this process (one SystemC kernel per process).
StatsRegistry& stats_registry();

// A module's view of the registry: names each statistic under the module's hierarchical name.
class StatsGroup {
 public:
  explicit StatsGroup(std::string prefix, StatsRegistry& registry = stats_registry())
      : prefix_(std::move(prefix)), registry_(registry) {}
  Counter& counter(std::string_view name, std::string unit, std::string description) {
    return registry_.counter(full(name), std::move(unit), std::move(description));
  }
  Accumulator& accumulator(std::string_view name, std::string unit, std::string description) {
    return registry_.accumulator(full(name), std::move(unit), std::move(description));
  }
  Histogram& histogram(std::string_view name, Histogram shape, std::string unit,
                       std::string description) {
    return registry_.histogram(full(name), std::move(shape), std::move(unit),
                               std::move(description));
  }
  TimeWeighted& time_weighted(std::string_view name, std::string unit, std::string description) {
    return registry_.time_weighted(full(name), std::move(unit), std::move(description));
  }
  Counter& attach(std::string_view name, Counter& counter, std::string unit,
                  std::string description) {
    registry_.attach(full(name), counter, std::move(unit), std::move(description));
    return counter;
  }

 private:
  std::string full(std::string_view name) const { return prefix_ + "." + std::string(name); }
  std::string prefix_;
  StatsRegistry& registry_;
};

}  // namespace podsim::core
