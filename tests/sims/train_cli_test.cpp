// `podsim train` end to end: a small GPT-style model's data-parallel steps on an hls2 box, the
// bounds scaling must keep (linear with an ideal network, compute plus communication without
// overlap, never below either with it), the trace, profiles as files, and bad arguments.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/support/chrome_trace_check.h"
#include "tests/support/test_support.h"

namespace podsim {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kSmallModel = {
    "--model", "gpt",        "--layers", "2",       "--hidden", "128",     "--heads",
    "2",       "--sequence", "64",       "--vocab", "1024",     "--batch", "2"};

class TrainCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::string> args = {"--system", "hls2", "-q", "train"};
    args.insert(args.end(), kSmallModel.begin(), kSmallModel.end());
    args.insert(args.end(), {"--profile-out", profile_.string()});
    const auto r = test::run_program(PODSIM_BINARY, args);
    ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
  }
  std::vector<std::string> args(std::vector<std::string> extra,
                                const std::string& system = "hls2") const {
    std::vector<std::string> a = {"--system", system, "-q", "train"};
    a.insert(a.end(), kSmallModel.begin(), kSmallModel.end());
    a.insert(a.end(), {"--profile", profile_.string()});
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  nlohmann::json train(std::vector<std::string> extra, const std::string& system = "hls2") {
    const auto json = dir_ / "train.json";
    extra.insert(extra.end(), {"--json", json.string()});
    last_ = test::run_program(PODSIM_BINARY, args(extra, system));
    EXPECT_EQ(last_.exit_status, 0) << last_.out << last_.err;
    return nlohmann::json::parse(test::read_text(json));
  }
  static std::uint64_t ps(const nlohmann::json& j, const char* key, int step = 1) {
    return j["steps"][step][key].get<std::uint64_t>();
  }

  test::TempDir dir_;
  std::filesystem::path profile_ = dir_ / "profile.json";
  test::RunResult last_;
};

TEST_F(TrainCli, WithAnIdealNetworkScalingIsLinear) {
  const auto one = train({"--ideal-network", "--ranks", "1"});
  const auto eight = train({"--ideal-network"});
  EXPECT_EQ(ps(eight, "step_ps"), ps(eight, "compute_ps"));
  EXPECT_EQ(ps(eight, "step_ps"), ps(one, "step_ps"));
  EXPECT_DOUBLE_EQ(eight["steps"][1]["samples_per_s"].get<double>(),
                   8 * one["steps"][1]["samples_per_s"].get<double>());
  EXPECT_DOUBLE_EQ(eight["steps"][1]["efficiency"].get<double>(), 1.0);
}

TEST_F(TrainCli, WithoutOverlapTheStepIsComputePlusCommunication) {
  const auto j = train({"--no-overlap", "--bucket", "64KiB"});
  EXPECT_GE(j["buckets"].get<int>(), 3);
  EXPECT_GT(ps(j, "comm_ps"), 0u);
  EXPECT_EQ(ps(j, "step_ps"), ps(j, "compute_ps") + ps(j, "comm_ps"));
}

TEST_F(TrainCli, OverlapHidesCommunicationButNeverBeatsEitherSide) {
  const auto serial = train({"--no-overlap", "--bucket", "64KiB"});
  const auto j = train({"--bucket", "64KiB"});
  EXPECT_GE(ps(j, "step_ps"), std::max(ps(j, "compute_ps"), ps(j, "comm_ps")));
  EXPECT_LT(ps(j, "step_ps"), ps(serial, "step_ps"));
  EXPECT_GT(ps(j, "exposed_ps"), 0u);  // the last bucket waits for the backward pass's end
  // The first step broadcasts the parameters first.
  EXPECT_GT(ps(j, "broadcast_ps", 0), 0u);
  // Then the same step: the same compute, and collectives that may differ a little, since the
  // first ones find the NICs' windows as the broadcast left them.
  EXPECT_EQ(ps(j, "compute_ps", 0), ps(j, "compute_ps"));
  EXPECT_NEAR(static_cast<double>(ps(j, "step_ps", 0)),
              static_cast<double>(ps(j, "step_ps") + ps(j, "broadcast_ps", 0)),
              0.01 * static_cast<double>(ps(j, "step_ps")));
}

TEST_F(TrainCli, TheTraceShowsComputeBucketsAndCollectives) {
  const auto trace = dir_ / "train.trace.json";
  train({"--bucket", "64KiB", "--trace", trace.string()});
  const std::string text = test::read_text(trace);
  EXPECT_THAT(text, HasSubstr("\"forward\""));
  EXPECT_THAT(text, HasSubstr("\"backward\""));
  EXPECT_THAT(text, HasSubstr("\"optimizer\""));
  EXPECT_THAT(text, HasSubstr("bucket 0 ready"));
  EXPECT_THAT(text, HasSubstr("broadcast"));
  EXPECT_THAT(text, HasSubstr("all_reduce"));
}

// Measuring a profile with --trace writes the measurement's own timeline: every engine's jobs
// while the model's shapes run on the chip, a valid Chrome trace.
TEST_F(TrainCli, MeasuringAProfileWithATraceShowsTheEnginesJobs) {
  const auto trace = dir_ / "profile.trace.json";
  std::vector<std::string> a = {"--system", "hls2", "-q", "--trace", trace.string(), "train"};
  a.insert(a.end(), kSmallModel.begin(), kSmallModel.end());
  a.insert(a.end(), {"--profile-out", (dir_ / "again.json").string()});
  const auto r = test::run_program(PODSIM_BINARY, a);
  ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(test::read_text(trace));
  EXPECT_THAT(test::check_chrome_trace(j), ::testing::IsEmpty());
  const std::string text = j.dump();
  EXPECT_THAT(text, HasSubstr("system.box0.chip0"));
  EXPECT_THAT(text, HasSubstr("\"kernel "));  // TPC jobs
  EXPECT_THAT(text, HasSubstr("\"gemm\""));   // MME jobs
  // The MMEs and the TPCs of one chip work at once: a bias's gradient (a TPC reduction) beside
  // its weight gradient (an MME GEMM), the next layer's kernels beside a weight gradient.
  std::map<std::pair<int, int>, std::string> threads;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name")
      threads[{e["pid"].get<int>(), e["tid"].get<int>()}] = e["args"]["name"].get<std::string>();
  }
  struct Span {
    int chip;
    double start, end;
  };
  std::vector<Span> mme, tpc;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const std::string& track = threads[{e["pid"].get<int>(), e["tid"].get<int>()}];
    const Span span{e["pid"].get<int>(), e["ts"].get<double>(),
                    e["ts"].get<double>() + e["dur"].get<double>()};
    if (track.rfind("mme", 0) == 0) mme.push_back(span);
    if (track.rfind("tpc", 0) == 0) tpc.push_back(span);
  }
  ASSERT_FALSE(mme.empty());
  ASSERT_FALSE(tpc.empty());
  double both = 0;  // microseconds of MME job and TPC job at once, summed over pairs
  for (const Span& m : mme) {
    for (const Span& t : tpc) {
      if (m.chip == t.chip)
        both += std::max(0.0, std::min(m.end, t.end) - std::max(m.start, t.start));
    }
  }
  EXPECT_GT(both, 0) << "no TPC job ran while an MME job did";
}

TEST_F(TrainCli, TheProfileKeepsTheSlowestOfABoxsReplicas) {
  const auto alone = nlohmann::json::parse(test::read_text(profile_));
  EXPECT_EQ(alone["replicas"], 1);
  const auto box = dir_ / "box.json";
  std::vector<std::string> a = {"--system", "hls2", "-q", "train"};
  a.insert(a.end(), kSmallModel.begin(), kSmallModel.end());
  a.insert(a.end(), {"--profile-out", box.string(), "--profile-replicas", "8"});
  ASSERT_EQ(test::run_program(PODSIM_BINARY, a).exit_status, 0);
  const auto j = nlohmann::json::parse(test::read_text(box));
  EXPECT_EQ(j["replicas"], 8);
  // Eight replicas share the box's host: none is faster than one chip alone.
  for (std::size_t s = 0; s < j["shapes"].size(); ++s) {
    EXPECT_GE(j["shapes"][s]["forward_ps"].get<double>(),
              alone["shapes"][s]["forward_ps"].get<double>());
  }
}

TEST_F(TrainCli, AMeasuredProfileGivesWhatItsFileGives) {
  const auto json = dir_ / "measured.json";
  std::vector<std::string> a = {"--system", "hls2", "-q", "train"};
  a.insert(a.end(), kSmallModel.begin(), kSmallModel.end());
  a.insert(a.end(), {"--json", json.string()});
  const auto r = test::run_program(PODSIM_BINARY, a);
  ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
  const auto measured = nlohmann::json::parse(test::read_text(json));
  const auto from_file = train({});
  EXPECT_EQ(measured["steps"], from_file["steps"]);
  EXPECT_EQ(measured["profile"], from_file["profile"]);
}

TEST_F(TrainCli, AScalingStudyRunsEachPointAndWritesTableCsvAndPlot) {
  const auto csv = dir_ / "scale.csv", svg = dir_ / "scale.svg", json = dir_ / "scale.json";
  const auto r = test::run_program(
      PODSIM_BINARY, args({"--scale", "1,2,8", "--bucket", "64KiB", "--csv", csv.string(), "--plot",
                           svg.string(), "--json", json.string()}));
  ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(test::read_text(json));
  ASSERT_EQ(j["points"].size(), 3u);
  EXPECT_EQ(j["points"][2]["chips"], 8);
  // One chip has nothing to reduce but still runs its (one-rank) collectives.
  EXPECT_LE(j["points"][2]["efficiency"].get<double>(), j["points"][0]["efficiency"].get<double>());
  const std::string table = test::read_text(csv);
  EXPECT_THAT(table, HasSubstr("chips,step_ms,samples_per_s,efficiency"));
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 4);
  EXPECT_THAT(test::read_text(svg), HasSubstr("<svg"));
  EXPECT_THAT(test::read_text(svg), HasSubstr("linear scaling"));
  EXPECT_THAT(test::read_text(svg), HasSubstr("scaling efficiency against linear"));
  // Regression: the printed table's header lacked the busiest link's column its rows have.
  EXPECT_THAT(r.out, HasSubstr("exposed_ms busiest_link"));
  // The same point alone gives the same step.
  const auto eight = train({"--bucket", "64KiB"});
  EXPECT_EQ(j["points"][2]["step_ps"], eight["steps"][1]["step_ps"]);
}

// Horovod's background loop takes what became ready in each cycle and fuses it: with a cycle
// longer than the backward pass, one cycle reduces everything in one fused buffer.
TEST_F(TrainCli, HorovodFusesWhatEachCycleFinds) {
  const auto one_cycle = train({"--strategy", "horovod", "--cycle-time", "1s"});
  EXPECT_EQ(one_cycle["steps"][1]["fusion_cycles"], 1);
  EXPECT_EQ(one_cycle["steps"][1]["all_reduces"], 1);
  // A fusion threshold below each gradient's size: one all-reduce per gradient.
  const auto small = train({"--strategy", "horovod", "--cycle-time", "1s", "--fusion", "1KiB"});
  EXPECT_EQ(small["steps"][1]["all_reduces"], 3);  // two layers' and the head's gradients
  // Short cycles follow the backward pass: several cycles, the step no shorter than compute.
  const auto j = train({"--strategy", "horovod", "--cycle-time", "2us"});
  EXPECT_GT(j["steps"][1]["fusion_cycles"].get<int>(), 1);
  EXPECT_GE(ps(j, "step_ps"), ps(j, "compute_ps"));
  const auto trace = dir_ / "horovod.json";
  train({"--strategy", "horovod", "--cycle-time", "2us", "--trace", trace.string()});
  EXPECT_THAT(test::read_text(trace), HasSubstr("fusion cycle 0:"));
}

TEST_F(TrainCli, ClusterDescriptionsPlaceTheWorkers) {
  auto j = train({"--hosts", "a:2,b:2"}, "hls2-pod128");
  EXPECT_EQ(j["chips"], (std::vector<int>{0, 1, 8, 9}));
  EXPECT_THAT(last_.out, HasSubstr("placement  4 workers: a -> box 0 chips 0-1, b -> box 1"));
  j = train({"--num-nodes", "2", "--devices", "8"}, "hls2-pod128");
  EXPECT_EQ(j["workers"], 16);
  j = train({"--tf-config", R"({"cluster":{"worker":["x:1","x:2","x:3"]},"task":{"index":0}})"});
  EXPECT_EQ(j["chips"], (std::vector<int>{0, 1, 2}));
}

// Sixteen nodes over two racks meet across the spines: the busiest switch-to-switch link
// carried part of the step, and says how much of its line rate.
TEST_F(TrainCli, TheBusiestLinkIsReported) {
  const auto j = train({"--num-nodes", "16", "--devices", "1", "--chips", "coarse"}, "hls2-rack8x");
  EXPECT_GT(j["busiest_link_utilisation"].get<double>(), 0);
  EXPECT_LT(j["busiest_link_utilisation"].get<double>(), 1);
  EXPECT_THAT(last_.out, HasSubstr("busiest switch-to-switch link"));
}

// Accumulation: the step runs four micro-batches and averages once; with an ideal network the
// step is their compute, and each step trains four times the samples.
TEST_F(TrainCli, AccumulationRunsMicroBatchesAndAveragesOnce) {
  const auto one = train({"--ideal-network"});
  const auto trace = dir_ / "trace.json";
  const auto four = train({"--ideal-network", "--accumulate", "4", "--trace", trace.string()});
  EXPECT_EQ(four["micro_batches"].get<int>(), 4);
  EXPECT_EQ(ps(four, "step_ps"), ps(four, "compute_ps"));
  EXPECT_GT(ps(four, "step_ps"), 3 * ps(one, "step_ps"));
  EXPECT_EQ(ps(four, "all_reduces"), ps(one, "all_reduces"));
  // Linear scaling holds: efficiency 1, with four times the samples per step.
  EXPECT_DOUBLE_EQ(four["steps"][1]["efficiency"].get<double>(), 1.0);
  EXPECT_THAT(last_.out, HasSubstr("accumulate 4 micro-batches per step (8 samples per worker)"));
  EXPECT_THAT(test::read_text(trace), HasSubstr("micro-batch 2 (accumulating)"));
  // Regression: the compute line counted the accumulating micro-batches as the forward pass.
  EXPECT_THAT(last_.out, HasSubstr("compute    3 micro-batches accumulating"));
  EXPECT_THAT(last_.out, HasSubstr("then the last one's forward"));
}

// Regression: a scaling study's points ran with Horovod's default cycle time and fusion
// threshold whatever the user gave.
TEST_F(TrainCli, AScalingStudyPassesHorovodsOptionsToEachPoint) {
  const auto json = dir_ / "scale.json";
  const auto r =
      test::run_program(PODSIM_BINARY, args({"--strategy", "horovod", "--cycle-time", "40ms",
                                             "--scale", "8", "--json", json.string()}));
  ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(test::read_text(json));
  // The first fusion cycle starts 40 ms into the step.
  EXPECT_GT(j["points"][0]["step_ps"].get<double>(), 40e9);
}

// Horovod over MPI: each fused buffer to the hosts over PCIe, summed there and between the two
// hosts over their front-end network, and back; the broadcast takes the same way.
TEST_F(TrainCli, HostStagedHorovodGoesThroughPcieAndTheHostsNetwork) {
  const auto trace = dir_ / "hosts.json";
  const auto j =
      train({"--strategy", "horovod", "--staging", "host", "--num-nodes", "2", "--devices", "8",
             "--chips", "coarse", "--cycle-time", "100us", "--trace", trace.string()},
            "hls2-pod128");
  EXPECT_EQ(j["hosts"], 2);
  EXPECT_GT(ps(j, "comm_ps"), 0u);
  EXPECT_GE(ps(j, "step_ps"), std::max(ps(j, "compute_ps"), ps(j, "comm_ps")));
  EXPECT_THAT(last_.out, HasSubstr("2 hosts over a front-end network of 2 x 100 Gb/s ports"));
  // On the chips' own leaf instead (pod128's rails are single leaves, so the hosts' path is as
  // long as over the front-end switch): the same step.
  const auto converged = train(
      {"--strategy", "horovod", "--staging", "host", "--num-nodes", "2", "--devices", "8",
       "--chips", "coarse", "--cycle-time", "100us", "--set", "host.network.attach=scale-out"},
      "hls2-pod128");
  EXPECT_THAT(last_.out, HasSubstr("2 hosts over the chips' scale-out switches, NICs of 2 x 100"));
  EXPECT_EQ(ps(converged, "step_ps"), ps(j, "step_ps"));
  const std::string text = test::read_text(trace);
  for (const char* span : {"stage to host", "host reduce", "hosts all-reduce", "stage to device",
                           "step-0 broadcast", "fusion cycle 0:"}) {
    EXPECT_THAT(text, HasSubstr(span));
  }
  // Staged through one host, its CPU sums the box's copies and no network is needed.
  const auto one_box = train(
      {"--strategy", "horovod", "--staging", "host", "--chips", "coarse", "--cycle-time", "100us"});
  EXPECT_EQ(one_box["hosts"], 1);
  EXPECT_GT(ps(one_box, "comm_ps"), 0u);
  // Without overlap the step is compute plus communication, give or take the last cycle's wait.
  const auto serial = train({"--strategy", "horovod", "--staging", "host", "--chips", "coarse",
                             "--cycle-time", "1us", "--no-overlap"});
  EXPECT_GE(ps(serial, "step_ps"), ps(serial, "compute_ps") + ps(serial, "comm_ps"));
  EXPECT_LE(ps(serial, "step_ps"), ps(serial, "compute_ps") + ps(serial, "comm_ps") + 1'000'000);
}

// ipu-multiworker: the chips only compute; every gradient goes to the hosts as it is ready, and
// the host CPU updates the weights and sends them back.
TEST_F(TrainCli, IpuMultiworkerUpdatesTheWeightsOnTheHosts) {
  const auto trace = dir_ / "ipu.json";
  const auto j = train({"--strategy", "ipu-multiworker", "--num-nodes", "2", "--devices", "4",
                        "--chips", "coarse", "--trace", trace.string()},
                       "hls2-pod128");
  const auto hccl = train({"--chips", "coarse"});
  EXPECT_LT(ps(j, "compute_ps"), ps(hccl, "compute_ps"));  // no optimizer on the chips
  EXPECT_EQ(j["steps"][1]["all_reduces"], 3);              // one per gradient
  EXPECT_GE(ps(j, "step_ps"), ps(j, "compute_ps"));
  const std::string text = test::read_text(trace);
  for (const char* span :
       {"stage layer 0 gradient", "host update layer 0", "hosts all-reduce", "step-0 broadcast"}) {
    EXPECT_THAT(text, HasSubstr(span));
  }
}

// Through the hosts too, an ideal network scales linearly: every worker's step is one worker's.
TEST_F(TrainCli, WithAnIdealNetworkHostStrategiesScaleLinearly) {
  for (std::vector<std::string> strategy :
       {std::vector<std::string>{"--strategy", "horovod", "--staging", "host"},
        std::vector<std::string>{"--strategy", "ipu-multiworker"}}) {
    strategy.insert(strategy.end(), {"--ideal-network", "--chips", "coarse"});
    auto one = strategy, sixteen = strategy;
    one.insert(one.end(), {"--ranks", "1"});
    sixteen.insert(sixteen.end(), {"--ranks", "16"});
    const auto a = train(one, "hls2-pod128");
    const auto b = train(sixteen, "hls2-pod128");
    EXPECT_EQ(ps(a, "step_ps"), ps(b, "step_ps")) << strategy[1];
    EXPECT_DOUBLE_EQ(b["steps"][1]["samples_per_s"].get<double>(),
                     16 * a["steps"][1]["samples_per_s"].get<double>());
  }
}

// A step's passes add up: for the shipped transformers as their presets run (one layer of each
// at its batch and sequence), the backward pass, twice the forward's GEMM work, takes 1.5 to
// 2.5 times the forward. The GPT-style decoder's attention is fused and recomputed; BERT's is
// unfused at 128 tokens.
TEST(TrainProfile, AShippedTransformersBackwardTakesOneAndAHalfToTwoAndAHalfForwards) {
  test::TempDir dir;
  for (const char* model : {"gpt", "bert-large"}) {
    const auto out = dir / (std::string(model) + ".json");
    const auto r = test::run_program(
        PODSIM_BINARY, {"--system", "hls2", "-q", "train", "--model", model, "--layers", "1",
                        "--ranks", "1", "--profile-out", out.string()});
    ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
    const auto j = nlohmann::json::parse(test::read_text(out));
    const auto& layer = j["shapes"][1];  // the second layer's (the first carries the tables)
    ASSERT_THAT(layer["shape"].get<std::string>(), HasSubstr("transformer"));
    const double forward = layer["forward_ps"].get<double>();
    const double backward = layer["backward_ps"].get<double>();
    EXPECT_GE(backward, 1.5 * forward) << model;
    EXPECT_LE(backward, 2.5 * forward) << model;
  }
}

TEST_F(TrainCli, BadArgumentsAreUsageErrors) {
  const auto fails = [](std::vector<std::string> a, const std::string& message) {
    const auto r = test::run_program(PODSIM_BINARY, a);
    EXPECT_EQ(r.exit_status, 2) << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(message));
  };
  fails({"train", "--model", "resnet"}, "model 'resnet': not one of");
  fails(args({"--ranks", "9"}), "--ranks 9: hls2 has 8 chips");
  fails(args({"--bucket", "lots"}), "--bucket");
  fails({"train", "--model", "bert-large", "--sequence", "512", "--packed", "3"},
        "sequence 512 is not a multiple of packed 3");
  fails({"train", "--model", "resnet50", "--packed", "2"},
        "--packed is for the transformer models");
  fails({"train", "--model", "resnet50", "--attention", "fused"},
        "--attention is for the transformer models");
  fails({"train", "--model", "gpt", "--attention", "flash"}, "--attention");
  fails({"train", "--model", "gpt", "--mlm-head", "all"},
        "--mlm-head is for BERT's masked-LM head");
  fails({"train", "--model", "resnet50", "--mlm-head", "all"}, "--mlm-head is for BERT's");
  fails({"--system", "hls2", "train", "--model", "gpt", "--profile", profile_.string()},
        "the profile was measured for other layer shapes");
  fails({"--system", "hls2", "train", "--profile", (dir_ / "none.json").string()}, "no such file");
  fails(args({"--scale", "8,16"}), "--scale 16: hls2 has 8 chips");
  fails(args({"--csv", "x.csv"}), "--csv and --plot go with --scale");
  fails(args({"--tf-config", R"({"cluster":{"worker":["a:1"]},"task":{"index":3}})"}),
        "TF_CONFIG: task index 3 out of range: the cluster has 1 worker");
  fails(args({"--hosts", "a:9"}), "host a has 9 workers; a box has 8 chips");
  fails(args({"--hosts", "a:2", "--ranks", "2"}), "give one");
  fails(args({"--num-nodes", "2"}), "--num-nodes and --devices go together");
  fails(args({"--cycle-time", "0s"}), "--cycle-time 0s");
  fails(args({"--pipeline-schedule", "interleaved"}), "--pipeline-schedule goes with --pipeline");
  fails(args({"--pipeline-schedule", "1f1b"}), "--pipeline-schedule");
  fails(args({"--staging", "host"}), "--staging host goes with --strategy horovod");
  auto no_network = args({"--strategy", "ipu-multiworker", "--ranks", "16"}, "hls2-pod128");
  no_network.insert(no_network.begin() + 2, {"--set", "host.network.enabled=false"});
  fails(no_network, "host.network.enabled: hls2-pod128's hosts have no front-end network");
  fails({"--system", "hls2-pod128", "--set", "host.network.enabled=false", "train", "--model",
         "mnist", "--functional", "--strategy", "ipu-multiworker", "--num-nodes", "2", "--devices",
         "2"},
        "train --functional: host.network.enabled: hls2-pod128's hosts have no front-end network");
  std::vector<std::string> too_many = {"--system",
                                       "hls2",
                                       "train",
                                       "--model",
                                       "gpt",
                                       "--profile-out",
                                       (dir_ / "p.json").string(),
                                       "--profile-replicas",
                                       "9"};
  fails(too_many, "--profile-replicas 9: a box of hls2 has 8 chips");
  fails({"--system", "fattree-k16", "train", "--model", "gpt", "--profile-out",
         (dir_ / "p.json").string()},
        "the driver serves Gaudi1 and Gaudi2");
}

}  // namespace
}  // namespace podsim

namespace podsim {
namespace {

// --functional: the MNIST net trained for real on 4 chips of an hls1 box, and on a fifth alone
// with their whole batch.
TEST(TrainFunctionalCli, ReplicasTrainForRealAndEndWhereOneChipEnds) {
  test::TempDir dir;
  const auto json = dir / "train.json";
  const auto r = test::run_program(
      PODSIM_BINARY, {"--system", "hls1", "-q", "train", "--model", "mnist", "--functional",
                      "--ranks", "4", "--steps", "2", "--batch", "8", "--json", json.string()});
  ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("end with identical parameters"));
  EXPECT_THAT(r.out, HasSubstr("chip 4 alone on the global batch of 32"));
  const auto j = nlohmann::json::parse(test::read_text(json));
  EXPECT_TRUE(j["identical"].get<bool>());
  EXPECT_LT(j["difference_from_one_chip"].get<double>(), 0.1);
  ASSERT_EQ(j["steps"].size(), 2u);
  for (const auto& s : j["steps"]) {
    EXPECT_NEAR(s["loss"].get<double>(), s["one_chip_loss"].get<double>(),
                0.02 * s["one_chip_loss"].get<double>());
  }
}

// Host-staged on two boxes' hosts, as mpirun would place 2 x 2 workers: the hosts' sums meet over
// their front-end network, and the replicas still end as one.
TEST(TrainFunctionalCli, HostStagedOnTwoHostsSumsBetweenThemAndTrains) {
  test::TempDir dir;
  const auto json = dir / "train.json";
  const auto r = test::run_program(PODSIM_BINARY, {"--system",   "hls1",
                                                   "--set",      "boxes=2",
                                                   "--set",      "network.kind=leaf-spine",
                                                   "--set",      "network.leaf_down_ports=16",
                                                   "train",      "--model",
                                                   "mnist",      "--functional",
                                                   "--strategy", "horovod",
                                                   "--staging",  "host",
                                                   "--hosts",    "a:2,b:2",
                                                   "--steps",    "2",
                                                   "--batch",    "8",
                                                   "--json",     json.string()});
  ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("between 2 hosts over their network"));
  EXPECT_THAT(r.out, HasSubstr("end with identical parameters"));
  const auto j = nlohmann::json::parse(test::read_text(json));
  EXPECT_EQ(j["hosts"], 2);
  EXPECT_TRUE(j["identical"].get<bool>());
  // bf16 rounding: host-staged on one box ends 0.11 of the update apart at this batch and step
  // count too (0.053 device-direct); a replica alone ends several updates away.
  EXPECT_LT(j["difference_from_one_chip"].get<double>(), 0.2);
}

TEST(TrainFunctionalCli, OnlyTheMnistNetTrainsFunctionally) {
  const auto gpt = test::run_program(
      PODSIM_BINARY, {"--system", "hls1", "train", "--model", "gpt", "--functional"});
  EXPECT_EQ(gpt.exit_status, 2);
  EXPECT_THAT(gpt.err, HasSubstr("gpt is too large to train in functional mode"));
  const auto timing = test::run_program(
      PODSIM_BINARY,
      {"--system", "hls1", "train", "--model", "mnist", "--functional", "--ideal-network"});
  EXPECT_EQ(timing.exit_status, 2);
  EXPECT_THAT(timing.err, HasSubstr("are for timing runs"));
}

// Runs `job` on `system` with replay and with --no-replay (and `extra` on both).
class TrainReplay : public TrainCli {
 protected:
  nlohmann::json run(const std::vector<std::string>& job, std::vector<std::string> extra = {}) {
    extra.insert(extra.begin(), job.begin(), job.end());
    return train(extra, system_);
  }
  void run_both(const std::vector<std::string>& job) {
    replayed_ = run(job);
    simulated_ = run(job, {"--no-replay"});
  }
  void expect_same_steps(int steps, std::initializer_list<const char*> keys) const {
    for (int step = 0; step < steps; ++step) {
      for (const char* key : keys) {
        EXPECT_EQ(ps(replayed_, key, step), ps(simulated_, key, step))
            << key << " of step " << step;
      }
    }
  }

  std::string system_ = "hls2-pod128";
  nlohmann::json replayed_, simulated_;
};

// Equal buckets on an idle flow network: the later ones are replayed with the first one's time,
// and the step, its collectives and the fabric's load are those of simulating every one.
TEST_F(TrainReplay, ReplayedCollectivesTakeTheTimesOfSimulatedOnes) {
  // 16 boxes: over two leaves, so switch-to-switch links carry some of it.
  system_ = "hls2-rack8x";
  const std::vector<std::string> job = {"--network", "flow",   "--ranks",  "128",
                                        "--chips",   "coarse", "--bucket", "160KiB"};
  run_both(job);
  EXPECT_GT(replayed_["collectives_replayed"].get<int>(), 0);
  EXPECT_EQ(simulated_["collectives_replayed"], 0);
  EXPECT_EQ(
      replayed_["collectives_replayed"].get<int>() + replayed_["collectives_simulated"].get<int>(),
      simulated_["collectives_simulated"].get<int>());
  expect_same_steps(2, {"step_ps", "comm_ps", "exposed_ps"});
  EXPECT_EQ(replayed_["fabric"]["flows"], simulated_["fabric"]["flows"]);
  const double load = simulated_["fabric"]["uplink_max_bytes"].get<double>();
  EXPECT_GT(load, 0);
  EXPECT_NEAR(replayed_["fabric"]["uplink_max_bytes"].get<double>(), load, 1e-9 * load);
  // A trace shows every collective: nothing is replayed.
  const auto traced = run(job, {"--trace", (dir_ / "t.json").string()});
  EXPECT_EQ(traced["collectives_replayed"], 0);
}

// The same on a packet network, whose NICs keep retransmission timers that outlive the traffic
// they guard. Detailed chips (the packet network's default) do set-up work the first time a
// collective runs, so a kind is replayed only once two in a row took as long: the step-0
// broadcasts too come out as simulated.
TEST_F(TrainReplay, OnAPacketNetworkReplayedCollectivesTakeTheTimesOfSimulatedOnes) {
  for (const char* chips : {"detailed", "coarse"}) {
    SCOPED_TRACE(chips);
    run_both({"--network", "packet", "--ranks", "16", "--chips", chips, "--bucket", "160KiB",
              "--steps", "3"});
    EXPECT_GT(replayed_["collectives_replayed"].get<int>(), 0);
    expect_same_steps(3, {"step_ps", "comm_ps", "exposed_ps", "broadcast_ps"});
    EXPECT_EQ(replayed_["fabric"]["packet_hops"], simulated_["fabric"]["packet_hops"]);
  }
}

// Once a switch has had to decide an ECN mark, DCQCN's rates and the marking stream have moved:
// nothing is replayed after that, and the steps stay those of simulating everything.
TEST_F(TrainReplay, AfterAnEcnMarkCollectivesAreSimulated) {
  run_both({"--set", "network.switch.ecn.kmin=0B", "--set", "network.switch.ecn.kmax=1B",
            "--network", "packet", "--ranks", "16", "--chips", "coarse", "--bucket", "160KiB"});
  EXPECT_GT(simulated_["fabric"]["ecn_marks"].get<std::uint64_t>(), 0u);
  expect_same_steps(2, {"step_ps", "comm_ps"});
  EXPECT_EQ(replayed_["fabric"]["ecn_marks"], simulated_["fabric"]["ecn_marks"]);
  EXPECT_EQ(replayed_["collectives_replayed"], 0);
  EXPECT_FALSE(replayed_["replay_through_congestion"].get<bool>());
}

// --replay-congested replays them anyway, each with its recorded twin's time and marks: close to
// simulating everything, not equal (the marking streams and DCQCN rates are not carried over).
// Marking every packet is its worst case: each simulated all-reduce leaves rates cut for the
// next, which its replayed twin, recorded from uncut rates, does not see (1.3% of this step).
TEST_F(TrainReplay, ThroughCongestionCollectivesAreReplayedApproximately) {
  const std::vector<std::string> job = {"--set",     "network.switch.ecn.kmin=0B",
                                        "--set",     "network.switch.ecn.kmax=1B",
                                        "--network", "packet",
                                        "--ranks",   "16",
                                        "--chips",   "coarse",
                                        "--bucket",  "160KiB"};
  run_both(job);
  const auto congested = run(job, {"--replay-congested"});
  EXPECT_TRUE(congested["replay_through_congestion"].get<bool>());
  EXPECT_GT(congested["collectives_replayed"].get<int>(), 0);
  EXPECT_EQ(
      congested["collectives_replayed"].get<int>() + congested["collectives_simulated"].get<int>(),
      simulated_["collectives_simulated"].get<int>());
  const auto marks = simulated_["fabric"]["ecn_marks"].get<double>();
  EXPECT_GT(marks, 0);
  // The marks depend on where the buckets fall in the backward pass (which the profile sets):
  // within 20% at one profile, 39% at another; the steps' times are what must stay close.
  EXPECT_NEAR(congested["fabric"]["ecn_marks"].get<double>(), marks, 0.5 * marks);
  for (int step = 0; step < 2; ++step) {
    const double simulated = static_cast<double>(ps(simulated_, "step_ps", step));
    EXPECT_NEAR(static_cast<double>(ps(congested, "step_ps", step)), simulated, 0.03 * simulated)
        << "step " << step;
  }
  const auto both = test::run_program(PODSIM_BINARY, args({"--replay-congested", "--no-replay"}));
  EXPECT_EQ(both.exit_status, 2);
  EXPECT_THAT(both.err, HasSubstr("--no-replay"));
}

// IPU pods: the roofline's compute, GCL's rings over the IPU-Links.
nlohmann::json train_ipu(const std::string& system, std::vector<std::string> extra,
                         test::RunResult* run = nullptr, const std::string& network = "packet") {
  test::TempDir dir;
  const auto json = dir / "train.json";
  std::vector<std::string> a = {"--system", system,  "-q",      "--network",
                                network,    "train", "--model", "resnet50",
                                "--batch",  "4",     "--json",  json.string()};
  a.insert(a.end(), extra.begin(), extra.end());
  const auto r = test::run_program(PODSIM_BINARY, a);
  EXPECT_EQ(r.exit_status, 0) << r.out << r.err;
  if (run) *run = r;
  return nlohmann::json::parse(test::read_text(json));
}

std::uint64_t step_ps(const nlohmann::json& j, const char* key) {
  return j["steps"][1][key].get<std::uint64_t>();
}

// popdist: compiled all-reduces after the backward pass (no overlap on an IPU): the step is
// compute plus communication, to the picosecond; the broadcast goes through the host.
TEST(TrainIpuCli, PopdistReducesOverIpuLinkRingsAfterBackward) {
  test::TempDir dir;
  const auto trace = dir / "ipu.json";
  test::RunResult run;
  const auto j = train_ipu("ipu-pod16", {"--trace", trace.string()}, &run);
  EXPECT_EQ(j["strategy"], "popdist");  // an IPU system's default
  EXPECT_EQ(j["workers"], 16);
  EXPECT_GT(step_ps(j, "comm_ps"), 0u);
  EXPECT_EQ(step_ps(j, "step_ps"), step_ps(j, "compute_ps") + step_ps(j, "comm_ps"));
  EXPECT_THAT(run.out, HasSubstr("gc200's bulk-synchronous roofline"));
  EXPECT_THAT(run.out, HasSubstr("16 replicas in IPU-Link ring order"));
  const std::string text = test::read_text(trace);
  EXPECT_THAT(text, HasSubstr("IPU-Link all-reduce"));
  EXPECT_THAT(text, HasSubstr("step-0 broadcast"));
  // With an ideal network, 16 replicas run at one's pace.
  const auto one = train_ipu("ipu-pod16", {"--ideal-network", "--ranks", "1"});
  const auto all = train_ipu("ipu-pod16", {"--ideal-network"});
  EXPECT_EQ(step_ps(one, "step_ps"), step_ps(all, "step_ps"));
  EXPECT_DOUBLE_EQ(all["steps"][1]["efficiency"].get<double>(), 1.0);
}

// Across pods the ring crosses the GW-Links: slower than inside one pod.
TEST(TrainIpuCli, PodsJoinOverGwLinks) {
  const auto one_pod = train_ipu("ipu-pod128", {"--ranks", "64"}, nullptr, "flow");
  const auto two_pods = train_ipu("ipu-pod128", {"--ranks", "128"}, nullptr, "flow");
  EXPECT_GT(step_ps(two_pods, "comm_ps"), step_ps(one_pod, "comm_ps"));
}

// ipu-server: each server's IPU-Links, then the hosts' network.
TEST(TrainIpuCli, IpuServersReduceInsideThenBetweenHosts) {
  test::TempDir dir;
  const auto trace = dir / "server.json";
  const auto j = train_ipu("ipu-server", {"--strategy", "ipu-server", "--trace", trace.string()});
  EXPECT_EQ(j["hosts"], 4);
  const std::string text = test::read_text(trace);
  for (const char* span : {"server all-reduce", "stage to host", "hosts all-reduce",
                           "stage to device", "step-0 broadcast"}) {
    EXPECT_THAT(text, HasSubstr(span));
  }
  const auto multiworker = train_ipu("ipu-server", {"--strategy", "ipu-multiworker"});
  EXPECT_EQ(multiworker["hosts"], 4);
}

// An IPU-POD's IPUs reach their host through their IPU-M2000's gateway, four to its two 100GbE
// RoCE host links, and all the gateways through the host's own NIC ports, rather than through the
// host sockets' PCIe uplinks. The step-0 broadcast, rank 0's model up to the host and down to
// every IPU, is bound by the host's two 100GbE ports: 17 copies of the model at their goodput.
// With a port for each gateway link, the gateways' own links bind it, and it beats the sockets'.
TEST(TrainIpuCli, PodsStageThroughTheirMachinesGatewaysAndTheHostsNic) {
  test::RunResult run;
  const auto gateways = train_ipu("ipu-pod16", {"--strategy", "ipu-multiworker"}, &run, "flow");
  EXPECT_THAT(run.out, HasSubstr("staging through gateways of 4 chips, each over 2 x 100 Gb/s RoCE "
                                 "host links, into each host's 2 x 100 Gb/s NIC ports"));
  const auto wide =
      train_ipu("ipu-pod16", {"--strategy", "ipu-multiworker", "--set", "host.network.ports=8"},
                nullptr, "flow");
  const auto sockets =
      train_ipu("ipu-pod16", {"--strategy", "ipu-multiworker", "--set", "host.gateway.chips=0"},
                &run, "flow");
  EXPECT_THAT(run.out, HasSubstr("PCIe staging over each box's tree"));
  const auto broadcast = [](const nlohmann::json& j) {
    return j["steps"][0]["broadcast_ps"].get<double>();
  };
  const double model = 2.0 * gateways["parameters"].get<double>();  // bf16
  const double nic_goodput = 200e9 / 8 * 4096 / 4178;               // bytes per second
  EXPECT_NEAR(broadcast(gateways), 17 * model / nic_goodput * 1e12, 0.02 * broadcast(gateways));
  EXPECT_LT(broadcast(wide), 0.4 * broadcast(gateways));
  EXPECT_LT(broadcast(wide), broadcast(sockets));
}

// An IPU-POD64 with four servers (host.servers) instead of one: each streams its 16 IPUs'
// gradients through its own NIC, and the servers all-reduce over their front-end network.
TEST(TrainIpuCli, MoreServersWidenAPodsWayToItsHosts) {
  test::RunResult run;
  const std::vector<std::string> job = {"--strategy", "ipu-multiworker", "--ranks", "64"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = job;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const auto one = train_ipu("ipu-pod64", with({}), nullptr, "flow");
  const auto four = train_ipu("ipu-pod64", with({"--set", "host.servers=4"}), &run, "flow");
  EXPECT_EQ(one["hosts"], 1);
  EXPECT_EQ(four["hosts"], 4);
  EXPECT_THAT(run.out, HasSubstr("4 hosts over a front-end network"));
  EXPECT_LT(four["steps"][0]["broadcast_ps"].get<double>(),
            0.5 * one["steps"][0]["broadcast_ps"].get<double>());
  EXPECT_LT(step_ps(four, "step_ps"), step_ps(one, "step_ps"));
  // A host list names the four servers, one host each.
  const auto listed =
      train_ipu("ipu-pod64",
                {"--strategy", "ipu-multiworker", "--hosts", "a,b,c,d", "--set", "host.servers=4"},
                &run, "flow");
  EXPECT_EQ(listed["hosts"], 4);
  EXPECT_EQ(listed["workers"], 64);
  EXPECT_THAT(run.out, HasSubstr("d -> box 0 server 3 chips 48-63"));
}

// BERT-Large does not fit one IPU: pipelined over four, each stage's gradients all-reduce among
// that stage's IPUs. The step is the schedule's N + K - 1 slots and the slowest stage's update,
// then the stages' all-reduces; samples/s counts replicas, not IPUs.
TEST(TrainIpuCli, APipelinedReplicaSpansSeveralIpus) {
  test::TempDir dir;
  const auto json = dir / "train.json";
  const auto trace = dir / "trace.json";
  const std::vector<std::string> a = {
      "--system",     "ipu-pod16",  "-q",      "--network",   "flow",       "train",
      "--model",      "bert-large", "--batch", "2",           "--pipeline", "4",
      "--accumulate", "8",          "--json",  json.string(), "--trace",    trace.string()};
  const auto r = test::run_program(PODSIM_BINARY, a);
  ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(test::read_text(json));
  EXPECT_EQ(j["workers"], 16);
  EXPECT_EQ(j["replicas"], 4);
  const auto& stages = j["pipeline"]["stages"];
  ASSERT_EQ(stages.size(), 4u);
  int next = 0;
  std::uint64_t parameters = 0, optimizer = 0;
  for (const auto& s : stages) {
    EXPECT_EQ(s["first_layer"], next);
    EXPECT_GT(s["end_layer"].get<int>(), next);
    next = s["end_layer"].get<int>();
    EXPECT_LE(s["memory_bytes"].get<double>(), 897.0 * 1024 * 1024);
    parameters += s["parameters"].get<std::uint64_t>();
    optimizer = std::max(optimizer, s["optimizer_ps"].get<std::uint64_t>());
  }
  EXPECT_EQ(next, 25);  // 24 encoder layers and the head
  EXPECT_EQ(parameters, j["parameters"].get<std::uint64_t>());
  const auto slot = j["pipeline"]["slot_ps"].get<std::uint64_t>();
  EXPECT_EQ(step_ps(j, "compute_ps"), (8 + 4 - 1) * slot + optimizer);
  EXPECT_EQ(j["steps"][1]["all_reduces"], 4);
  EXPECT_GT(step_ps(j, "comm_ps"), 0u);
  EXPECT_EQ(step_ps(j, "step_ps"), step_ps(j, "compute_ps") + step_ps(j, "comm_ps"));
  EXPECT_DOUBLE_EQ(j["steps"][1]["samples_per_s"].get<double>(),
                   4 * 2 * 8 / (static_cast<double>(step_ps(j, "step_ps")) * 1e-12));
  EXPECT_THAT(r.out, HasSubstr("4 replicas pipelined over 4 IPUs each"));
  EXPECT_THAT(r.out, HasSubstr("compute    pipeline "));
  EXPECT_THAT(r.out, HasSubstr("(8 micro-batches through 4 stages)"));
  const std::string text = test::read_text(trace);
  EXPECT_THAT(text, HasSubstr("IPU-Link all-reduce per stage"));
  // The ramp: the last stage takes the first micro-batch three slots after the first stage.
  const auto events = nlohmann::json::parse(text)["traceEvents"];
  EXPECT_TRUE(test::check_chrome_trace(nlohmann::json::parse(text)).empty());
  const auto first_start = [&](const std::string& name) {
    for (const auto& e : events) {
      if (e.value("name", "") == name) return e["ts"].get<double>();
    }
    ADD_FAILURE() << "no span " << name;
    return 0.0;
  };
  EXPECT_NEAR(first_start("stage 3: micro-batch 0") - first_start("stage 0: micro-batch 0"),
              3 * static_cast<double>(slot) * 1e-6, 1e-3);
  EXPECT_EQ(j["pipeline"]["schedule"], "grouped");  // Graphcore's default

  // Sequentially (a sharded model), one micro-batch goes through every stage and back before the
  // next: N slots, each every stage's forward and backward, and no ramp in the trace.
  std::vector<std::string> seq = a;
  seq.insert(seq.end(), {"--pipeline-schedule", "sequential"});
  const auto rs = test::run_program(PODSIM_BINARY, seq);
  ASSERT_EQ(rs.exit_status, 0) << rs.out << rs.err;
  const auto js = nlohmann::json::parse(test::read_text(json));
  EXPECT_EQ(js["pipeline"]["schedule"], "sequential");
  const auto seq_slot = js["pipeline"]["slot_ps"].get<std::uint64_t>();
  EXPECT_GT(seq_slot, 3 * slot);
  std::uint64_t seq_optimizer = 0;
  for (const auto& s : js["pipeline"]["stages"]) {
    seq_optimizer = std::max(seq_optimizer, s["optimizer_ps"].get<std::uint64_t>());
  }
  EXPECT_EQ(step_ps(js, "compute_ps"), 8 * seq_slot + seq_optimizer);
  EXPECT_THAT(rs.out, HasSubstr("sequential schedule: 8 slots"));
  // The trace shows the stages taking their turns within a slot, not all of it at once.
  const auto seq_trace = nlohmann::json::parse(test::read_text(trace))["traceEvents"];
  double stage0 = -1, stage1 = -1;
  for (const auto& e : seq_trace) {
    if (e.value("name", "") == "stage 0: micro-batch 0" && stage0 < 0) stage0 = e["ts"];
    if (e.value("name", "") == "stage 1: micro-batch 0" && stage1 < 0) stage1 = e["ts"];
  }
  EXPECT_NEAR(stage1 - stage0, static_cast<double>(seq_slot / 4) * 1e-6, 1e-3);
}

// Replicated tensor sharding: the GPT-style model's fp32 optimizer state, streamed from
// Streaming Memory when every replica keeps all of it, fits on chip as a 16th; the gradients are
// reduce-scattered and the new weights all-gathered, which moves what one all-reduce moves.
TEST(TrainIpuCli, ShardingTheOptimizerStateOverReplicasKeepsItOnChip) {
  test::TempDir dir;
  const auto trace = dir / "sharded.json";
  const std::vector<std::string> gpt = {
      "--model", "gpt",        "--layers", "12",      "--hidden", "768",          "--heads",
      "12",      "--sequence", "256",      "--batch", "1",        "--accumulate", "16"};
  const auto train = [&](std::vector<std::string> extra, test::RunResult* run = nullptr) {
    std::vector<std::string> a = {"--system", "ipu-pod16", "-q", "--network", "flow", "train"};
    a.insert(a.end(), gpt.begin(), gpt.end());
    a.insert(a.end(), extra.begin(), extra.end());
    const auto json = dir / "train.json";
    a.insert(a.end(), {"--json", json.string()});
    const auto r = test::run_program(PODSIM_BINARY, a);
    EXPECT_EQ(r.exit_status, 0) << r.out << r.err;
    if (run) *run = r;
    return nlohmann::json::parse(test::read_text(json));
  };
  test::RunResult run;
  const auto whole = train({});
  const auto sharded = train({"--shard-optimizer", "--trace", trace.string()}, &run);
  EXPECT_EQ(whole["optimizer_shards"], 1);
  EXPECT_EQ(sharded["optimizer_shards"], 16);
  EXPECT_TRUE(whole["pipeline"]["stages"][0]["optimizer_state_streamed"].get<bool>());
  EXPECT_FALSE(sharded["pipeline"]["stages"][0]["optimizer_state_streamed"].get<bool>());
  EXPECT_THAT(run.out, HasSubstr("In-Processor-Memory, sharded over the 16 replicas"));
  EXPECT_LT(step_ps(sharded, "step_ps"), step_ps(whole, "step_ps") / 3);
  EXPECT_EQ(step_ps(sharded, "step_ps"),
            step_ps(sharded, "compute_ps") + step_ps(sharded, "comm_ps"));
  EXPECT_EQ(sharded["steps"][1]["all_gathers"], 1);
  EXPECT_EQ(whole["steps"][1]["all_gathers"], 0);
  EXPECT_NEAR(step_ps(sharded, "comm_ps"), step_ps(whole, "comm_ps"),
              0.01 * step_ps(whole, "comm_ps"));
  const std::string text = test::read_text(trace);
  for (const char* span :
       {"IPU-Link reduce-scatter", "optimizer (own shard)", "IPU-Link all-gather"}) {
    EXPECT_THAT(text, HasSubstr(span));
  }
  // With an ideal network the step is the passes and the replica's share of the update, which
  // the plan gives: the on-chip update over 16 rather than the update and the streaming.
  const auto ideal_whole = train({"--ideal-network"});
  const auto ideal_sharded = train({"--shard-optimizer", "--ideal-network"});
  const auto optimizer = [](const nlohmann::json& j) {
    return j["pipeline"]["stages"][0]["optimizer_ps"].get<std::uint64_t>();
  };
  EXPECT_EQ(step_ps(ideal_sharded, "step_ps"), step_ps(ideal_sharded, "compute_ps"));
  EXPECT_EQ(step_ps(ideal_sharded, "step_ps") - optimizer(ideal_sharded),
            step_ps(ideal_whole, "step_ps") - optimizer(ideal_whole));
  EXPECT_LT(16 * optimizer(ideal_sharded), optimizer(ideal_whole) / 100);
  // Pipelined, each stage's ranks gather their stage's weights.
  const auto bert = test::run_program(
      PODSIM_BINARY, {"--system", "ipu-pod16", "-q", "--network", "flow", "train", "--model",
                      "bert-large", "--batch", "2", "--pipeline", "4", "--accumulate", "8",
                      "--shard-optimizer", "--json", (dir / "bert.json").string()});
  ASSERT_EQ(bert.exit_status, 0) << bert.err;
  const auto b = nlohmann::json::parse(test::read_text(dir / "bert.json"));
  EXPECT_EQ(b["optimizer_shards"], 4);
  EXPECT_EQ(b["steps"][1]["all_gathers"], 4);
}

// --recompute: ResNet-50 at 16 images an IPU, which does not fit otherwise, trains with a
// backward pass a forward pass longer; a scaling study carries the flag to every point.
TEST(TrainIpuCli, RecomputationFitsLargerBatches) {
  test::TempDir dir;
  const auto train = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = {"--system",
                                  "ipu-pod16",
                                  "-q",
                                  "--network",
                                  "flow",
                                  "train",
                                  "--model",
                                  "resnet50",
                                  "--batch",
                                  "16",
                                  "--recompute",
                                  "--json",
                                  (dir / "train.json").string()};
    a.insert(a.end(), extra.begin(), extra.end());
    const auto r = test::run_program(PODSIM_BINARY, a);
    EXPECT_EQ(r.exit_status, 0) << r.err;
    return std::make_pair(r, nlohmann::json::parse(test::read_text(dir / "train.json")));
  };
  const auto [run, j] = train({});
  EXPECT_TRUE(j["recompute"].get<bool>());
  EXPECT_THAT(run.out, HasSubstr("backward recomputing each layer's activations"));
  const auto [scaled, scale] = train({"--scale", "16"});
  EXPECT_EQ(scale["points"][0]["step_ps"], j["steps"][1]["step_ps"]);
}

TEST(TrainIpuCli, WrongStrategiesAndReplicaCountsAreUsageErrors) {
  const auto fails = [](std::vector<std::string> a, const std::string& message) {
    const auto r = test::run_program(PODSIM_BINARY, a);
    EXPECT_EQ(r.exit_status, 2) << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(message));
  };
  const std::vector<std::string> resnet = {"train", "--model", "resnet50", "--batch", "4"};
  auto with = [&](const std::string& system, std::vector<std::string> extra) {
    std::vector<std::string> a = {"--system", system};
    a.insert(a.end(), resnet.begin(), resnet.end());
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  fails(with("ipu-pod16", {"--ranks", "12"}), "12 replicas: GCL's rings take a power of two");
  fails(with("ipu-pod16", {"--strategy", "hccl"}), "ipu-pod16 is an IPU system");
  fails(with("hls2", {"--strategy", "popdist"}), "runs on IPU systems");
  fails({"--system", "ipu-pod16", "train", "--model", "resnet50"}, "a per-worker batch of at most");
  fails(with("ipu-pod16", {"--functional"}), "moves no data");
  fails({"--system", "ipu-pod16", "train", "--model", "bert-large", "--batch", "2"},
        "pipeline each replica over at least 2 IPUs (--pipeline)");
  fails(with("hls2", {"--pipeline", "2"}), "--pipeline 2 pipelines a replica over IPUs");
  fails(with("ipu-pod16", {"--shard-optimizer", "--strategy", "ipu-multiworker"}),
        "--strategy ipu-multiworker keeps it on the hosts");
  fails(with("hls2", {"--shard-optimizer"}), "shards the optimizer state over popdist's replicas");
  fails(with("hls2", {"--recompute"}), "--recompute times the IPU roofline's recomputation");
  fails(with("hls2", {"--recompute", "--profile-out", "unwritten.json"}),
        "--recompute times the IPU roofline's recomputation");
  fails({"--system", "ipu-pod16", "train", "--model", "resnet50", "--batch", "16"},
        "(more with recomputation: --recompute)");
  fails(with("ipu-pod16", {"--pipeline", "3"}), "16 IPUs in pipelines of 3 stages");
  fails(with("ipu-pod16", {"--pipeline", "2", "--strategy", "ipu-server"}), "it runs popdist");
  fails({"--system", "ipu-pod16", "train", "--model", "bert-large", "--pipeline", "2"},
        "does not fit 2 pipeline stages");
  fails({"--system", "ipu-server", "train", "--model", "bert-large", "--batch", "2", "--pipeline",
         "4"},
        "which no GW-Links join");
}

}  // namespace
}  // namespace podsim

namespace podsim {
namespace {

// What cannot run is refused before a profile is measured (each refusal comes at once, with no
// --profile given): a chip the driver does not serve, a model whose replica cannot fit the chip's
// memory (the sizes named), a cluster description that names a task past its workers.
TEST(TrainRefusals, ComeBeforeTheProfileIsMeasured) {
  const auto run = [](std::vector<std::string> args) {
    return test::run_program(PODSIM_BINARY, args);
  };
  const auto hls3 = run({"--system", "hls3", "train", "--model", "bert-large"});
  EXPECT_EQ(hls3.exit_status, 2) << hls3.err;
  EXPECT_THAT(hls3.err, ::testing::HasSubstr("the driver serves Gaudi1 and Gaudi2 chips"));
  EXPECT_THAT(hls3.err, ::testing::Not(::testing::HasSubstr("internal error")));
  // 400 layers of width 4096: some 80 G parameters, 1.3 TB with their optimizer state.
  const auto big = run({"--system", "hls2", "train", "--model", "gpt", "--layers", "400",
                        "--hidden", "4096", "--heads", "32", "--batch", "1"});
  EXPECT_EQ(big.exit_status, 2) << big.err;
  EXPECT_THAT(big.err, ::testing::HasSubstr("does not fit a gaudi2"));
  EXPECT_THAT(big.err, ::testing::HasSubstr("optimizer state"));
  EXPECT_THAT(big.err, ::testing::HasSubstr("GB of device memory"));
  const auto tf =
      run({"--system", "hls2", "train", "--model", "bert-large", "--tf-config",
           R"({"cluster":{"worker":["a:1","b:1"]},"task":{"type":"worker","index":5}})"});
  EXPECT_EQ(tf.exit_status, 2) << tf.err;
  EXPECT_THAT(tf.err, ::testing::HasSubstr("task index 5 out of range"));
}

}  // namespace
}  // namespace podsim
