// `podsim run` end to end: the MLP trained through the driver and the Synapse-like stack in lazy
// and eager modes, checked against the CPU, its trace, determinism and bad arguments.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/support/chrome_trace_check.h"
#include "tests/support/test_support.h"

namespace podsim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class RunCli : public ::testing::Test {
 protected:
  nlohmann::json run(std::vector<std::string> args) {
    const auto json = dir_ / "run.json";
    args.insert(args.begin(), "run");
    args.insert(args.end(), {"--json", json.string(), "-q"});
    last_ = test::run_program(PODSIM_BINARY, args);
    EXPECT_EQ(last_.exit_status, 0) << last_.out << last_.err;
    return nlohmann::json::parse(test::read_text(json));
  }
  test::RunResult fails(std::vector<std::string> args) {
    args.insert(args.begin(), "run");
    return test::run_program(PODSIM_BINARY, args);
  }

  test::TempDir dir_;
  test::RunResult last_;
};

TEST_F(RunCli, LazyModeCompilesTheStepOnceAndMatchesTheCpu) {
  const auto j = run({"--steps", "3", "--layers", "64,128,10", "--batch", "32", "--check"});
  ASSERT_EQ(j["steps"].size(), 3u);
  EXPECT_EQ(j["compiles"], 1);
  EXPECT_EQ(j["launches"], 3);
  for (const auto& s : j["steps"]) {
    EXPECT_NEAR(s["loss"].get<double>(), s["reference_loss"].get<double>(),
                2e-2 * s["reference_loss"].get<double>());
    EXPECT_GT(s["device_ps"].get<double>(), 0);
    EXPECT_GT(s["tpc_busy_ps"].get<double>(), 0);
    EXPECT_GT(s["mme_busy_ps"].get<double>(), 0);
    EXPECT_GT(s["hbm_bytes"].get<double>(), 0);
  }
  EXPECT_THAT(last_.out, HasSubstr("within the bf16 tolerance"));
  EXPECT_THAT(last_.out, HasSubstr("compiler   fused bias0+relu0 into one TPC launch"));
  EXPECT_THAT(last_.out, HasSubstr("on hls1 chip 0 (gaudi1) through the driver"));
}

// On a Gaudi2 (hls2) the same stack runs through Gaudi2's queue ids on its 24 TPCs, and the
// transformer layer still matches the CPU.
TEST_F(RunCli, TheTransformerLayerRunsOnAGaudi2) {
  const auto j =
      run({"--system", "hls2", "--workload", "transformer-block", "--steps", "1", "--check"});
  ASSERT_EQ(j["steps"].size(), 1u);
  EXPECT_GT(j["steps"][0]["tpc_busy_ps"].get<double>(), 0);
  EXPECT_THAT(last_.out, HasSubstr("on hls2 chip 0 (gaudi2) through the driver"));
  EXPECT_THAT(last_.out, HasSubstr("24 TPCs busy"));
  EXPECT_THAT(last_.out, HasSubstr("within the bf16 tolerance"));
}

// Eager mode launches every operation on its own and compiles each distinct one once; it
// computes the same losses.
TEST_F(RunCli, EagerModeRunsOpByOpToTheSameLosses) {
  const auto lazy = run({"--steps", "2", "--layers", "64,128,10", "--batch", "32"});
  const auto eager =
      run({"--steps", "2", "--layers", "64,128,10", "--batch", "32", "--mode", "eager"});
  EXPECT_GT(eager["launches"].get<int>(), 20);
  EXPECT_GT(eager["compiles"].get<int>(), 5);
  EXPECT_GE(eager["cache_hits"].get<int>(), eager["compiles"].get<int>());  // step 2: all hits
  for (int s = 0; s < 2; ++s)
    EXPECT_EQ(eager["steps"][s]["loss"], lazy["steps"][s]["loss"]) << "step " << s;
}

// One transformer layer forward and backward, all on the device: every result checked against
// the CPU.
TEST_F(RunCli, ATransformerBlockRunsForwardAndBackwardChecked) {
  const auto j = run({"--workload", "transformer-block", "--steps", "2", "--sequence", "32",
                      "--hidden", "64", "--heads", "2", "--ffn", "128", "--check"});
  EXPECT_TRUE(j["check"]["ok"].get<bool>());
  EXPECT_FALSE(j.contains("host_ops"));
  EXPECT_EQ(j["steps"][0]["loss"], j["steps"][1]["loss"]);  // the same inputs each step
  EXPECT_THAT(last_.out, Not(HasSubstr("host CPU")));
  EXPECT_THAT(last_.out, HasSubstr("the output, dx and every parameter gradient"));
}

std::set<std::string> trace_names(const nlohmann::json& trace, const char* kind) {
  std::set<std::string> names;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == kind) names.insert(e["args"]["name"].get<std::string>());
  return names;
}

// Driver submissions, QMANs, TPCs, MMEs, DMA and HBM on one timeline.
TEST_F(RunCli, TheTraceShowsDriverSubmissionsAndTheEngines) {
  const auto trace = dir_ / "run.trace.json";
  run({"--steps", "1", "--layers", "64,128,10", "--batch", "32", "--trace", trace.string()});
  const auto t = nlohmann::json::parse(test::read_text(trace));
  EXPECT_THAT(test::check_chrome_trace(t), ::testing::IsEmpty());
  const auto threads = trace_names(t, "thread_name");
  const auto processes = trace_names(t, "process_name");
  EXPECT_TRUE(processes.count("system.box0.host.cpu.driver")) << "driver track";
  EXPECT_TRUE(threads.count("bus1_cs0")) << "the device's CSs";
  EXPECT_TRUE(threads.count("tpc0")) << "TPC track";
  EXPECT_TRUE(threads.count("mme0")) << "MME track";
  EXPECT_TRUE(processes.count("system.box0.chip0.tpc0_qman")) << "QMAN";
}

// Busy intervals of one engine class on chip 0's tracks (threads named `prefix`N), merged.
std::vector<std::pair<double, double>> busy(const nlohmann::json& trace,
                                            const std::string& prefix) {
  std::map<std::pair<int, int>, std::string> threads;
  int chip = -1;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "M") continue;
    const std::string name = e["args"]["name"].get<std::string>();
    if (e["name"] == "thread_name") threads[{e["pid"].get<int>(), e["tid"].get<int>()}] = name;
    if (e["name"] == "process_name" && name == "system.box0.chip0") chip = e["pid"].get<int>();
  }
  std::vector<std::pair<double, double>> spans;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X" || e["pid"].get<int>() != chip) continue;
    const auto it = threads.find({e["pid"].get<int>(), e["tid"].get<int>()});
    if (it == threads.end() || it->second.rfind(prefix, 0) != 0) continue;
    const double start = e["ts"].get<double>();
    spans.emplace_back(start, start + e["dur"].get<double>());
  }
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<double, double>> merged;
  for (const auto& s : spans) {
    if (!merged.empty() && s.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, s.second);
    } else {
      merged.push_back(s);
    }
  }
  return merged;
}

// In one transformer layer's step the MMEs and the TPCs work at once: the GEMM and its GELU
// chain pipelined in slices (the TPCs on one slice while the MMEs compute the next), and
// independent nodes side by side. Their busy intervals in the trace intersect.
TEST_F(RunCli, TheMmesAndTheTpcsWorkAtOnceInOneStep) {
  const auto trace = dir_ / "layer.trace.json";
  const auto j =
      run({"--workload", "transformer-block", "--steps", "1", "--batch", "2", "--sequence", "512",
           "--hidden", "256", "--heads", "4", "--ffn", "1024", "--trace", trace.string()});
  EXPECT_THAT(last_.out, HasSubstr("compiler   pipelined fc1 into fc1.bias+gelu in 2 slices"));
  const auto t = nlohmann::json::parse(test::read_text(trace));
  const auto mme = busy(t, "mme"), tpc = busy(t, "tpc");
  ASSERT_FALSE(mme.empty());
  ASSERT_FALSE(tpc.empty());
  double both = 0;
  for (const auto& [a, b] : mme) {
    for (const auto& [c, d] : tpc) both += std::max(0.0, std::min(b, d) - std::max(a, c));
  }
  double mme_total = 0;
  for (const auto& [a, b] : mme) mme_total += b - a;
  EXPECT_GT(both, 0.05 * mme_total)
      << "both engines busy " << both << " us of the MMEs' " << mme_total << " us";
}

TEST_F(RunCli, TheSameSeedGivesTheSameResults) {
  auto strip = [](nlohmann::json j) {
    j.erase("simulation_cpu_s");
    return j.dump();
  };
  const auto a = run({"--steps", "2", "--layers", "64,96,10", "--batch", "16", "--seed", "3"});
  const auto b = run({"--steps", "2", "--layers", "64,96,10", "--batch", "16", "--seed", "3"});
  EXPECT_EQ(strip(a), strip(b));
}

TEST_F(RunCli, BadArgumentsAreRefusedWithTheirReason) {
  auto r = fails({"--system", "hls3"});
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_THAT(r.err, HasSubstr("Gaudi2's queue ids name at most 10, 4 and 25"));
  EXPECT_THAT(r.err, HasSubstr("the driver serves Gaudi1 and Gaudi2 chips"));
  // Regression: a chip without engines (the fat tree's RoCE hosts) failed its first CS.
  r = fails({"--system", "fattree-k16"});
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_THAT(r.err, HasSubstr("roce-host has 0 TPCs and 0 MMEs: no engines to run graphs on"));
  r = fails({"--steps", "0"});
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_THAT(r.err, HasSubstr("--steps must be at least 1"));
  r = fails({"--layers", "64"});
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_THAT(r.err, HasSubstr("at least inputs and classes"));
  r = fails({"--dtype", "i32"});
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_THAT(r.err, HasSubstr("type i32: f32, bf16 or f16"));
  r = fails({"--workload", "resnet"});
  EXPECT_EQ(r.exit_status, 2);
  r = fails({"--workload", "transformer-block", "--hidden", "30", "--heads", "4"});
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_THAT(r.err, HasSubstr("hidden 30 is not a multiple of heads 4"));
}

}  // namespace
}  // namespace podsim
