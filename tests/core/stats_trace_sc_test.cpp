// A small simulation that uses stats and trace the way models do: an event-driven SC_METHOD
// engine that counts jobs, tracks utilization and queue depth in simulated time, and emits spans
// and counters. Each TEST runs in its own process (see sc_test_main.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <filesystem>
#include <string>
#include <systemc>
#include <vector>

#include "core/kernel.h"
#include "core/stats.h"
#include "core/trace.h"
#include "tests/support/chrome_trace_check.h"
#include "tests/support/test_support.h"

namespace podsim::core {
namespace {

using nlohmann::json;
using ::testing::IsEmpty;

constexpr TimePs kNs = 1000;

// Serves jobs one at a time, first come first served, each taking `service` ps.
class Engine : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Engine);
  Engine(sc_core::sc_module_name name, std::vector<TimePs> arrivals, TimePs service)
      : sc_core::sc_module(name),
        arrivals_at_(std::move(arrivals)),
        service_(service),
        stats_(this->name()),
        jobs_(stats_.counter("jobs", "jobs", "jobs completed")),
        latency_(
            stats_.histogram("latency", Histogram::linear(5, 5, 4), "ns", "arrival to completion")),
        busy_(stats_.time_weighted("busy", "fraction", "time serving a job")),
        depth_(stats_.time_weighted("queue_depth", "jobs", "jobs waiting or in service")),
        track_(trace_writer().track(this->name())) {
    SC_METHOD(schedule_arrivals);
    SC_METHOD(on_arrival);
    sensitive << arrival_;
    dont_initialize();
    SC_METHOD(on_done);
    sensitive << done_;
    dont_initialize();
  }

 private:
  void schedule_arrivals() {
    for (TimePs t : arrivals_at_) arrival_.notify(sc_core::sc_time::from_value(t));
  }

  void on_arrival() {
    queue_.push_back(now_ps());
    set_depth();
    if (queue_.size() == 1) start();
  }

  void start() {
    busy_.busy(now_ps());
    started_ = now_ps();
    done_.notify(sc_core::sc_time::from_value(service_));
  }

  void on_done() {
    const TimePs now = now_ps();
    jobs_.add();
    latency_.sample(static_cast<double>(now - queue_.front()) / kNs);
    if (trace_writer().enabled()) {
      trace_writer().span(track_, "job", started_, now, {{"job", jobs_.value()}});
    }
    queue_.pop_front();
    set_depth();
    if (queue_.empty()) {
      busy_.idle(now);
    } else {
      start();
    }
  }

  void set_depth() {
    depth_.set(static_cast<double>(queue_.size()), now_ps());
    if (trace_writer().enabled()) {
      trace_writer().counter(track_, "queue_depth", now_ps(), static_cast<double>(queue_.size()));
    }
  }

  std::vector<TimePs> arrivals_at_;
  TimePs service_;
  StatsGroup stats_;
  Counter& jobs_;
  Histogram& latency_;
  TimeWeighted& busy_;
  TimeWeighted& depth_;
  TrackId track_;
  sc_core::sc_event_queue arrival_{"arrival"};
  sc_core::sc_event done_{"done"};
  std::deque<TimePs> queue_;  // arrival times, front in service
  TimePs started_ = 0;
};

class System : public sc_core::sc_module {
 public:
  explicit System(sc_core::sc_module_name name = "system") : sc_core::sc_module(name) {}
  // engine0: jobs at 10, 12 and 50 ns, 5 ns each: busy 10-15, 15-20 (waited 3 ns), 50-55.
  Engine engine0{"engine0", {10 * kNs, 12 * kNs, 50 * kNs}, 5 * kNs};
  // engine1: one 20 ns job at time 0.
  Engine engine1{"engine1", {0}, 20 * kNs};
};

TEST(StatsTraceSim, RunProducesStatsAndALoadableTrace) {
  test::TempDir dir;
  const std::string trace_path = (dir / "trace.json").string();
  const std::string stats_path = (dir / "stats.json").string();
  System system;  // tracks are made at elaboration, before the trace opens
  trace_writer().open(trace_path);
  sc_core::sc_start();
  ASSERT_EQ(now_ps(), 55 * kNs);
  stats_registry().write(stats_path, now_ps());
  trace_writer().close();

  const json stats = json::parse(test::read_text(stats_path));
  EXPECT_EQ(stats["sim_time_ps"], 55 * kNs);
  const json& s = stats["stats"];
  EXPECT_EQ(s["system.engine0.jobs"]["value"], 3);
  EXPECT_EQ(s["system.engine1.jobs"]["value"], 1);
  EXPECT_DOUBLE_EQ(s["system.engine0.busy"]["average"].get<double>(), 15.0 / 55);
  EXPECT_DOUBLE_EQ(s["system.engine1.busy"]["average"].get<double>(), 20.0 / 55);
  EXPECT_EQ(s["system.engine0.busy"]["final"], 0.0);
  // Depth 1 over 10-12, 2 over 12-15, 1 over 15-20, 1 over 50-55.
  EXPECT_DOUBLE_EQ(s["system.engine0.queue_depth"]["average"].get<double>(),
                   (2 + 2 * 3 + 5 + 5) / 55.0);
  EXPECT_EQ(s["system.engine0.queue_depth"]["max"], 2.0);
  EXPECT_EQ(s["system.engine0.latency"]["counts"], json({2, 1, 0, 0, 0}));
  EXPECT_EQ(s["system.engine0.latency"]["max"], 8.0);

  const json trace = json::parse(test::read_text(trace_path));
  EXPECT_THAT(test::check_chrome_trace(trace), IsEmpty());
  std::vector<double> engine0_starts;
  int counters = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "C") ++counters;
    if (e["ph"] == "X" && e["name"] == "job" && e["tid"] == 1) {
      engine0_starts.push_back(e["ts"].get<double>());
      EXPECT_EQ(e["dur"], 0.005);
    }
  }
  EXPECT_EQ(engine0_starts, (std::vector<double>{0.010, 0.015, 0.050}));
  EXPECT_EQ(counters, 2 * 3 + 2 * 1);  // one on each arrival and completion
}

TEST(StatsTraceSim, StatsWithoutTraceAsCsv) {
  test::TempDir dir;
  const std::string stats_path = (dir / "stats.csv").string();
  System system;
  sc_core::sc_start();
  EXPECT_FALSE(trace_writer().enabled());
  stats_registry().write(stats_path, now_ps());
  const std::string csv = test::read_text(stats_path);
  EXPECT_THAT(csv, ::testing::HasSubstr("\nsystem.engine0.jobs,counter,jobs,value,3\n"));
  EXPECT_THAT(csv, ::testing::HasSubstr("\nsystem.engine1.busy,time_weighted,fraction,max,1.0\n"));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

}  // namespace
}  // namespace podsim::core
