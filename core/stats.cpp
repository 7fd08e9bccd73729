#include "core/stats.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "core/atomic_file.h"

namespace podsim::core {

void Accumulator::sample(double v) {
  min_ = count_ ? std::min(min_, v) : v;
  max_ = count_ ? std::max(max_, v) : v;
  sum_ += v;
  ++count_;
}

Histogram::Histogram(std::vector<double> upper_bounds) : bounds_(std::move(upper_bounds)) {
  if (bounds_.empty()) throw std::invalid_argument("histogram needs at least one bucket bound");
  for (std::size_t i = 1; i < bounds_.size(); ++i) {
    if (!(bounds_[i - 1] < bounds_[i])) {
      throw std::invalid_argument("histogram bounds must be strictly increasing");
    }
  }
  counts_.assign(bounds_.size() + 1, 0);
}

Histogram Histogram::linear(double first_bound, double width, std::size_t buckets) {
  if (!(width > 0)) throw std::invalid_argument("linear histogram width must be positive");
  std::vector<double> bounds(buckets);
  // Multiplying rather than adding repeatedly keeps each bound free of accumulated rounding.
  for (std::size_t i = 0; i < buckets; ++i) {
    bounds[i] = first_bound + width * static_cast<double>(i);
  }
  return Histogram(std::move(bounds));
}

Histogram Histogram::exponential(double first_bound, double factor, std::size_t buckets) {
  if (!(first_bound > 0) || !(factor > 1)) {
    throw std::invalid_argument("exponential histogram needs first bound > 0 and factor > 1");
  }
  std::vector<double> bounds(buckets);
  for (std::size_t i = 0; i < buckets; ++i) {
    bounds[i] = first_bound * std::pow(factor, static_cast<double>(i));
  }
  return Histogram(std::move(bounds));
}

void Histogram::sample(double v) {
  // lower_bound puts a sample equal to a bound into that bound's bucket ("<= bound").
  const auto bucket = std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin();
  ++counts_[static_cast<std::size_t>(bucket)];
  summary_.sample(v);
}

double Histogram::percentile(double p) const {
  const std::uint64_t total = summary_.count();
  if (total == 0) return 0.0;
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(total);
  std::uint64_t below = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    const std::uint64_t in_bucket = counts_[i];
    if (in_bucket == 0 || static_cast<double>(below + in_bucket) < rank) {
      below += in_bucket;
      continue;
    }
    // The observed min and max tighten the edges of the outer buckets (which are unbounded) and
    // of any bucket the samples only partly cover.
    const double lower_edge = i == 0 ? summary_.min() : std::max(bounds_[i - 1], summary_.min());
    const double upper_edge =
        i == bounds_.size() ? summary_.max() : std::min(bounds_[i], summary_.max());
    const double fraction = (rank - static_cast<double>(below)) / static_cast<double>(in_bucket);
    return lower_edge + fraction * (upper_edge - lower_edge);
  }
  return summary_.max();
}

void TimeWeighted::set(double level, TimePs now) {
  if (now > since_) {
    area_ += static_cast<long double>(level_) * static_cast<long double>(now - since_);
    since_ = now;
  }
  level_ = level;
  max_ = std::max(max_, level);
}

double TimeWeighted::average(TimePs now) const {
  if (now == 0) return level_;
  const TimePs held = now > since_ ? now - since_ : 0;
  const long double area = area_ + static_cast<long double>(level_) * held;
  return static_cast<double>(area / static_cast<long double>(now));
}

StatsRegistry::Entry& StatsRegistry::add(const std::string& name, Kind kind, std::string unit,
                                         std::string description) {
  auto [it, inserted] = entries_.try_emplace(
      name, Entry{kind, text(std::move(unit)), text(std::move(description)), nullptr});
  if (!inserted) throw std::logic_error("statistic '" + name + "' is registered twice");
  counter_list_stale_ = true;
  return it->second;
}

Counter& StatsRegistry::counter(const std::string& name, std::string unit,
                                std::string description) {
  Entry& entry = add(name, Kind::kCounter, std::move(unit), std::move(description));
  entry.stat = &counters_.emplace_back();
  return counters_.back();
}

void StatsRegistry::attach(const std::string& name, Counter& counter, std::string unit,
                           std::string description) {
  add(name, Kind::kCounter, std::move(unit), std::move(description)).stat = &counter;
}

void StatsRegistry::forget(const std::string& prefix) {
  const std::string below = prefix + ".";
  auto it = entries_.lower_bound(below);
  while (it != entries_.end() && it->first.compare(0, below.size(), below) == 0) {
    it = entries_.erase(it);
  }
  counter_list_stale_ = true;
}

Accumulator& StatsRegistry::accumulator(const std::string& name, std::string unit,
                                        std::string description) {
  Entry& entry = add(name, Kind::kAccumulator, std::move(unit), std::move(description));
  entry.stat = &accumulators_.emplace_back();
  return accumulators_.back();
}

Histogram& StatsRegistry::histogram(const std::string& name, Histogram shape, std::string unit,
                                    std::string description) {
  Entry& entry = add(name, Kind::kHistogram, std::move(unit), std::move(description));
  entry.stat = &histograms_.emplace_back(std::move(shape));
  return histograms_.back();
}

TimeWeighted& StatsRegistry::time_weighted(const std::string& name, std::string unit,
                                           std::string description) {
  Entry& entry = add(name, Kind::kTimeWeighted, std::move(unit), std::move(description));
  entry.stat = &time_weighted_.emplace_back();
  return time_weighted_.back();
}

namespace {

const char* kind_name(int kind) {
  static const char* const kNames[] = {"counter", "accumulator", "histogram", "time_weighted"};
  return kNames[kind];
}

void add_summary(nlohmann::json& out, const Accumulator& a) {
  out["count"] = a.count();
  out["mean"] = a.mean();
  out["min"] = a.min();
  out["max"] = a.max();
}

// Quotes a CSV field only when it needs it (RFC 4180), so plain names stay readable.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

void append_csv_row(std::string& csv, const std::string& prefix, const std::string& field,
                    const nlohmann::json& value) {
  csv += prefix;
  csv += csv_field(field);
  csv += ',';
  // The JSON serialiser prints the shortest text that round-trips, so CSV and JSON agree.
  csv += value.dump();
  csv += '\n';
}

}  // namespace

nlohmann::json StatsRegistry::to_json(TimePs end) const {
  nlohmann::json stats = nlohmann::json::object();
  for (const auto& [name, entry] : entries_) {
    nlohmann::json& out = stats[name];
    out["kind"] = kind_name(static_cast<int>(entry.kind));
    out["unit"] = *entry.unit;
    out["description"] = *entry.description;
    switch (entry.kind) {
      case Kind::kCounter:
        out["value"] = static_cast<const Counter*>(entry.stat)->value();
        break;
      case Kind::kAccumulator: {
        const auto& a = *static_cast<const Accumulator*>(entry.stat);
        add_summary(out, a);
        out["sum"] = a.sum();
        break;
      }
      case Kind::kHistogram: {
        const auto& h = *static_cast<const Histogram*>(entry.stat);
        out["bounds"] = h.upper_bounds();
        out["counts"] = h.counts();
        add_summary(out, h.summary());
        out["p50"] = h.percentile(50);
        out["p99"] = h.percentile(99);
        break;
      }
      case Kind::kTimeWeighted: {
        const auto& t = *static_cast<const TimeWeighted*>(entry.stat);
        out["average"] = t.average(end);
        out["max"] = t.max();
        out["final"] = t.level();
        break;
      }
    }
  }
  return {{"podsim_stats_version", 1}, {"sim_time_ps", end}, {"stats", std::move(stats)}};
}

std::string StatsRegistry::to_csv(TimePs end) const {
  std::string csv = "name,kind,unit,field,value\n";
  const nlohmann::json json = to_json(end);
  for (const auto& [name, stat] : json["stats"].items()) {
    const std::string prefix = csv_field(name) + "," + stat["kind"].get<std::string>() + "," +
                               csv_field(stat["unit"].get<std::string>()) + ",";
    for (const auto& [field, value] : stat.items()) {
      if (field == "kind" || field == "unit" || field == "description") continue;
      if (!value.is_array()) {
        append_csv_row(csv, prefix, field, value);
        continue;
      }
      for (std::size_t i = 0; i < value.size(); ++i) {
        append_csv_row(csv, prefix, field + "[" + std::to_string(i) + "]", value[i]);
      }
    }
  }
  return csv;
}

void StatsRegistry::write(const std::string& path, TimePs end) const {
  const std::string extension = std::filesystem::path(path).extension().string();
  if (extension != ".json" && extension != ".csv") {
    throw std::runtime_error(path + ": unknown stats format '" + extension +
                             "' (use .json or .csv)");
  }
  write_file_atomically(path, extension == ".json" ? to_json(end).dump(2) + "\n" : to_csv(end));
}

namespace {

// The raw form: for each statistic that left its initial state, its name, kind, unit and
// description, then its state; plain bytes, since both ends are the same build (a JSON form of a
// thousand-chip registry took seconds).
class RawWriter {
 public:
  template <class T>
  void put(const T& v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void put_text(const std::string& text) {
    put(static_cast<std::uint32_t>(text.size()));
    out_ += text;
  }
  template <class T>
  void put_all(const std::vector<T>& values) {
    put(static_cast<std::uint32_t>(values.size()));
    for (const T& v : values) put(v);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class RawReader {
 public:
  explicit RawReader(const std::string& in) : in_(in) {}
  bool done() const { return at_ == in_.size(); }
  template <class T>
  T get() {
    T v{};
    need(sizeof v);
    std::memcpy(&v, in_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string get_text() {
    const auto n = get<std::uint32_t>();
    need(n);
    std::string text = in_.substr(at_, n);
    at_ += n;
    return text;
  }
  template <class T>
  std::vector<T> get_all() {
    std::vector<T> values(get<std::uint32_t>());
    for (T& v : values) v = get<T>();
    return values;
  }

 private:
  void need(std::size_t n) const {
    if (in_.size() - at_ < n)
      throw std::runtime_error("statistics from another process are cut short");
  }
  const std::string& in_;
  std::size_t at_ = 0;
};

}  // namespace

std::string StatsRegistry::export_raw() const {
  RawWriter out;
  const auto put_raw_summary = [&out](const Accumulator& a) {
    out.put(a.count_);
    out.put(a.sum_);
    out.put(a.min_);
    out.put(a.max_);
  };
  for (const auto& [name, entry] : entries_) {
    const void* stat = entry.stat;
    switch (entry.kind) {
      case Kind::kCounter:
        if (static_cast<const Counter*>(stat)->value_ == 0) continue;
        break;
      case Kind::kAccumulator:
        if (static_cast<const Accumulator*>(stat)->count_ == 0) continue;
        break;
      case Kind::kHistogram:
        if (static_cast<const Histogram*>(stat)->summary_.count_ == 0) continue;
        break;
      case Kind::kTimeWeighted: {
        const auto& t = *static_cast<const TimeWeighted*>(stat);
        if (t.level_ == 0 && t.max_ == 0 && t.area_ == 0) continue;
        break;
      }
    }
    out.put_text(name);
    out.put(static_cast<std::uint8_t>(entry.kind));
    out.put_text(*entry.unit);
    out.put_text(*entry.description);
    switch (entry.kind) {
      case Kind::kCounter:
        out.put(static_cast<const Counter*>(stat)->value_);
        break;
      case Kind::kAccumulator:
        put_raw_summary(*static_cast<const Accumulator*>(stat));
        break;
      case Kind::kHistogram: {
        const auto& h = *static_cast<const Histogram*>(stat);
        out.put_all(h.bounds_);
        out.put_all(h.counts_);
        put_raw_summary(h.summary_);
        break;
      }
      case Kind::kTimeWeighted: {
        const auto& t = *static_cast<const TimeWeighted*>(stat);
        out.put(t.level_);
        out.put(t.max_);
        out.put(t.since_);
        out.put(t.area_);
        break;
      }
    }
  }
  return out.take();
}

void StatsRegistry::merge_raw(const std::string& raw) {
  RawReader in(raw);
  const auto merge_raw_summary = [&in](Accumulator& a) {
    const auto count = in.get<std::uint64_t>();
    const auto sum = in.get<double>(), min = in.get<double>(), max = in.get<double>();
    if (count == 0) return;
    a.min_ = a.count_ ? std::min(a.min_, min) : min;
    a.max_ = a.count_ ? std::max(a.max_, max) : max;
    a.count_ += count;
    a.sum_ += sum;
  };
  while (!in.done()) {
    const std::string name = in.get_text();
    const auto kind = static_cast<Kind>(in.get<std::uint8_t>());
    const std::string unit = in.get_text(), description = in.get_text();
    const auto it = entries_.find(name);
    void* stat = it == entries_.end() ? nullptr : it->second.stat;
    if (stat && it->second.kind != kind) {
      throw std::runtime_error(name + ": statistics of different kinds cannot be merged");
    }
    switch (kind) {
      case Kind::kCounter: {
        auto& c = stat ? *static_cast<Counter*>(stat) : counter(name, unit, description);
        c.value_ += in.get<std::uint64_t>();
        break;
      }
      case Kind::kAccumulator: {
        auto& a = stat ? *static_cast<Accumulator*>(stat) : accumulator(name, unit, description);
        merge_raw_summary(a);
        break;
      }
      case Kind::kHistogram: {
        const auto bounds = in.get_all<double>();
        const auto counts = in.get_all<std::uint64_t>();
        auto& h = stat ? *static_cast<Histogram*>(stat)
                       : histogram(name, Histogram(bounds), unit, description);
        if (counts.size() != h.counts_.size()) {
          throw std::runtime_error(name + ": histograms of different shapes cannot be merged");
        }
        for (std::size_t i = 0; i < counts.size(); ++i) h.counts_[i] += counts[i];
        merge_raw_summary(h.summary_);
        break;
      }
      case Kind::kTimeWeighted: {
        auto& t = stat ? *static_cast<TimeWeighted*>(stat) : time_weighted(name, unit, description);
        t.level_ += in.get<double>();
        t.max_ = std::max(t.max_, in.get<double>());
        t.since_ = std::max(t.since_, in.get<TimePs>());
        t.area_ += in.get<long double>();
        break;
      }
    }
  }
}

const std::vector<Counter*>& StatsRegistry::counter_list() const {
  if (counter_list_stale_) {
    counter_list_.clear();
    for (const auto& [name, e] : entries_) {
      if (e.kind == Kind::kCounter) counter_list_.push_back(static_cast<Counter*>(e.stat));
    }
    counter_list_stale_ = false;
  }
  return counter_list_;
}

std::vector<std::uint64_t> StatsRegistry::counter_values() const {
  std::vector<std::uint64_t> values;
  values.reserve(counter_list().size());
  for (const Counter* c : counter_list()) values.push_back(c->value());
  return values;
}

void StatsRegistry::add_counted(const std::vector<std::uint64_t>& before,
                                const std::vector<std::uint64_t>& after) {
  const std::vector<Counter*>& counters = counter_list();
  if (before.size() != counters.size() || after.size() != counters.size()) {
    throw std::invalid_argument("stats: the counters changed since their values were taken");
  }
  for (std::size_t i = 0; i < counters.size(); ++i) counters[i]->add(after[i] - before[i]);
}

void StatsRegistry::clear() {
  counter_list_stale_ = true;
  entries_.clear();
  texts_.clear();
  counters_.clear();
  accumulators_.clear();
  histograms_.clear();
  time_weighted_.clear();
}

StatsRegistry& stats_registry() {
  static StatsRegistry registry;
  return registry;
}

}  // namespace podsim::core
