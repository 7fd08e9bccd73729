// The training arithmetic without the kernel: models' parameters and work, the step's timeline,
// DDP's buckets, compute profiles as files and by the IPU roofline, and placements.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "hw/ipulink/ipu_config.h"
#include "tests/training/small_gpt.h"
#include "training/cluster.h"
#include "training/ipu_pipeline.h"
#include "training/ipu_profile.h"
#include "training/layer_work.h"
#include "training/model.h"
#include "training/profile.h"
#include "training/timeline.h"

namespace podsim::training {
namespace {

using ::testing::HasSubstr;

TEST(Model, BertLargeHasItsPublishedSize) {
  const Model m = make_model({});
  EXPECT_EQ(m.layers.size(), 25u);  // 24 layers and the head
  // Devlin et al.: 340 M, of which the pooler (1 M) is not modeled; the masked-LM head's
  // transform (1024 x 1024 + 3 x 1024) and the decoder's bias (30522) are.
  EXPECT_NEAR(static_cast<double>(m.parameters()) * 1e-6, 335.2, 0.1);
  EXPECT_EQ(m.batch, 64u);
  // The masked-LM head predicts ceil(0.15 x 128) = 20 slots a sample, as BERT's data has.
  EXPECT_EQ(m.shapes[2].head.tokens, 64u * 20u);
  EXPECT_EQ(m.shapes[2].head.loss_tokens, 0u);
  EXPECT_TRUE(m.shapes[2].head.transform);
  ModelRequest at512;
  at512.sequence = 512;
  EXPECT_EQ(make_model(at512).shapes[2].head.tokens, 64u * 77u);
  // Habana's MLPerf BERT: the head on every token, the loss on the masked ones gathered after it;
  // the GEMMs' work grows with the tokens, the parameters stay.
  at512.mlm_head = "all";
  const Model all = make_model(at512);
  EXPECT_EQ(all.shapes[2].head.tokens, 64u * 512u);
  EXPECT_EQ(all.shapes[2].head.loss_tokens, 64u * 77u);
  EXPECT_EQ(all.parameters(), make_model(ModelRequest{}).parameters());
  at512.mlm_head = "every";  // Hugging Face's: the loss on every token too
  EXPECT_EQ(make_model(at512).shapes[2].head.tokens, 64u * 512u);
  EXPECT_EQ(make_model(at512).shapes[2].head.loss_tokens, 0u);
  EXPECT_GT(layer_work(all.shapes[2]).forward_flops,
            6 * layer_work(make_model({}).shapes[2]).forward_flops);
  // A causal LM's head predicts every token.
  ModelRequest gpt;
  gpt.name = "gpt";
  EXPECT_EQ(make_model(gpt).shapes[2].head.tokens, 8u * 1024u);
}

TEST(Model, ATransformerLayerCountsEveryParameter) {
  LayerShape s;
  s.transformer.hidden = 8;
  s.transformer.ffn = 32;
  // qkv 8x24+24, projection 8x8+8, fc1 8x32+32, fc2 32x8+8, two norms 4x8.
  EXPECT_EQ(s.parameters(), 216u + 72u + 288u + 264u + 32u);
}

TEST(Model, TheGptShapeIsTheUsers) {
  ModelRequest r;
  r.name = "gpt";
  r.layers = 3;
  r.hidden = 256;
  r.heads = 4;
  r.sequence = 2048;
  const Model m = make_model(r);
  EXPECT_EQ(m.layers, (std::vector<int>{0, 1, 1, 2}));
  EXPECT_EQ(m.shapes[1].transformer.ffn, 1024u);
  // The position table grows with the sequence.
  EXPECT_EQ(m.shapes[0].extra_parameters, 2048u * 256u);
}

TEST(Model, BadRequestsNameTheProblem) {
  ModelRequest r;
  r.name = "resnet";  // not resnet50
  try {
    make_model(r);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("model 'resnet': not one of bert-large"));
  }
  r.name = "gpt";
  r.hidden = 100;
  r.heads = 3;
  EXPECT_THROW(make_model(r), std::invalid_argument);
}

// As the public runs train them: BERT with dropout 0.1 and LAMB, ResNet-50 with LARS, the
// GPT-style decoder with AdamW; the user's choice over the preset's.
TEST(Model, PresetsTrainWithTheirRunsDropoutAndOptimizer) {
  ModelRequest r;
  r.name = "bert-large";
  Model m = make_model(r);
  EXPECT_EQ(m.optimizer, Optimizer::kLamb);
  EXPECT_EQ(m.shapes[1].transformer.dropout, 0.1);
  EXPECT_THAT(m.shapes[1].key(), HasSubstr("dropout 0.1"));
  r.optimizer = "adamw";
  r.dropout = 0;
  m = make_model(r);
  EXPECT_EQ(m.optimizer, Optimizer::kAdamW);
  EXPECT_EQ(m.shapes[1].transformer.dropout, 0.0);
  r = {};
  r.name = "gpt";
  EXPECT_EQ(make_model(r).optimizer, Optimizer::kAdamW);
  r.name = "resnet50";
  EXPECT_EQ(make_model(r).optimizer, Optimizer::kLars);
  r.dropout = 0.1;
  EXPECT_THROW(make_model(r), std::invalid_argument);  // a convolutional net has no dropout
  r.dropout = -1;
  r.optimizer = "adagrad";
  try {
    make_model(r);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("optimizer 'adagrad': not one of adamw, lamb, lars, sgd"));
  }
  // LARS keeps one momentum a parameter, LAMB two moments.
  EXPECT_EQ(state_bytes(Optimizer::kLars), 4.0);
  EXPECT_EQ(state_bytes(Optimizer::kLamb), 8.0);
}

TEST(Model, ResNet50HasItsPublishedSizeAndShapes) {
  ModelRequest r;
  r.name = "resnet50";
  const Model m = make_model(r);
  // torchvision's resnet50: 25,557,032 trainable parameters (batch norm's gamma and beta
  // included, its running statistics not).
  EXPECT_EQ(m.parameters(), 25557032u);
  EXPECT_EQ(m.layers.size(), 18u);  // the stem, 16 bottlenecks, the classifier
  // The stem, each stage's first bottleneck and its others, the classifier.
  EXPECT_EQ(m.shapes.size(), 10u);
  EXPECT_EQ(m.batch, 256u);
  EXPECT_FALSE(m.shapes[0].input_gradient);
  // Each unit takes what the one before gives: 56x56x64 after the stem, 7x7x2048 at the end.
  for (std::size_t i = 1; i < m.layers.size(); ++i) {
    const auto& before = m.shapes[static_cast<std::size_t>(m.layers[i - 1])].conv;
    const auto& unit = m.shapes[static_cast<std::size_t>(m.layers[i])].conv;
    const std::array<std::uint32_t, 4> out = before.output();
    EXPECT_EQ((std::array<std::uint32_t, 4>{unit.channels, unit.width, unit.height, unit.batch}),
              out)
        << "unit " << i;
  }
  EXPECT_EQ(m.shapes[0].conv.output(), (std::array<std::uint32_t, 4>{64, 56, 56, 256}));
  EXPECT_EQ(m.shapes.back().conv.channels, 2048u);
  EXPECT_EQ(m.shapes.back().conv.height, 7u);
}

TEST(Model, TheMnistNetIsTheGuidesAndTakesOnlyABatch) {
  ModelRequest r;
  r.name = "mnist";
  r.batch = 16;
  const Model m = make_model(r);
  // conv 3x3x1x8 + 8, dense 1352x8 + 8, dense 8x10 + 10.
  EXPECT_EQ(m.parameters(), 80u + 10824u + 90u);
  EXPECT_EQ(m.shapes[0].conv.output(), (std::array<std::uint32_t, 4>{8, 13, 13, 16}));
  r.hidden = 64;
  try {
    make_model(r);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("--hidden is for the transformer models"));
  }
}

TEST(Model, ConvUnitsSayWhyTheyCannotBeBuilt) {
  workloads::ConvUnitConfig c;
  c.height = c.width = 4;
  c.window = 7;
  EXPECT_THAT(c.problem(), HasSubstr("7x7 window over a padded 4x4 input"));
  c.window = 3;
  c.pool = 3;
  EXPECT_THAT(c.problem(), HasSubstr("3x3 pool over a 2x2 map"));
  c.kind = workloads::ConvUnitKind::kClassifier;
  c.classes = 1;
  EXPECT_THAT(c.problem(), HasSubstr("at least two classes"));
}

Model three_layers() { return test::small_gpt(64, 16, 100); }

TEST(Timeline, GradientsAreReadyAsTheBackwardPassReachesTheirLayer) {
  const Model m = three_layers();
  const std::vector<LayerTiming> t = {{10, 20, 1}, {10, 20, 1}, {5, 7, 3}};
  const Timeline tl = step_timeline(m, t, 2);
  EXPECT_EQ(tl.forward_ps, 25u);
  EXPECT_EQ(tl.backward_ps, 25u + 7u + 20u + 20u);
  EXPECT_EQ(tl.optimizer_ps, 5u);
  EXPECT_EQ(tl.compute_ps(), 77u);
  ASSERT_EQ(tl.gradients.size(), 3u);
  EXPECT_EQ(tl.gradients[0].layer, 2);  // the head first
  EXPECT_EQ(tl.gradients[0].ready_ps, 32u);
  EXPECT_EQ(tl.gradients[0].bytes, m.shapes[2].parameters() * 2);
  EXPECT_EQ(tl.gradients[2].layer, 0);
  EXPECT_EQ(tl.gradients[2].ready_ps, 72u);
  EXPECT_THROW(step_timeline(m, {t[0]}, 2), std::invalid_argument);
}

TEST(Timeline, AccumulationRunsMicroBatchesBeforeTheLastHandsItsGradientsOn) {
  const Model m = three_layers();
  const std::vector<LayerTiming> timing = {{10, 20, 5}, {10, 20, 5}, {30, 40, 7}};
  const Timeline one = step_timeline(m, timing, 2);
  const Timeline three = step_timeline(m, timing, 2, 3);
  const core::TimePs pass = one.backward_ps;  // forward and backward of one micro-batch
  EXPECT_EQ(three.micro_batches, 3);
  EXPECT_EQ(three.accumulating_ps, 2 * pass);
  EXPECT_EQ(three.backward_ps, 3 * pass);
  EXPECT_EQ(three.compute_ps(), 3 * pass + one.optimizer_ps);  // one optimizer step
  ASSERT_EQ(three.gradients.size(), one.gradients.size());
  for (std::size_t i = 0; i < one.gradients.size(); ++i) {
    EXPECT_EQ(three.gradients[i].ready_ps, one.gradients[i].ready_ps + 2 * pass);
    EXPECT_EQ(three.gradients[i].bytes, one.gradients[i].bytes);
  }
  EXPECT_THROW(step_timeline(m, timing, 2, 0), std::invalid_argument);
}

TEST(Buckets, CloseBeforeTheCapAndTakeALargeGradientAlone) {
  const std::vector<Gradient> g = {{3, 10, 1}, {2, 10, 2}, {1, 50, 3}, {0, 5, 4}};
  const auto b = make_buckets(g, 25);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].bytes, 20u);
  EXPECT_EQ(b[0].ready_ps, 2u);
  EXPECT_EQ(b[1].bytes, 50u);
  EXPECT_EQ(b[1].layers, (std::vector<int>{1}));
  EXPECT_EQ(b[2].bytes, 5u);
  EXPECT_EQ(b[2].ready_ps, 4u);
  const auto one = make_buckets(g, 0);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].bytes, 75u);
  EXPECT_EQ(one[0].ready_ps, 4u);
}

TEST(Profile, RoundTripsThroughJsonAndRefusesAnotherModel) {
  const Model m = three_layers();
  StepProfile p;
  p.chip = "gaudi2";
  for (const auto& s : m.shapes) p.keys.push_back(s.key());
  p.shapes = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
  const StepProfile q = StepProfile::from_json(p.to_json(), "p.json");
  EXPECT_EQ(q.chip, "gaudi2");
  EXPECT_EQ(q.keys, p.keys);
  EXPECT_EQ(q.shapes[2].backward_ps, 8u);
  EXPECT_NO_THROW(q.check_matches(m, "p.json"));
  ModelRequest other;
  other.name = "gpt";
  try {
    q.check_matches(make_model(other), "p.json");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("p.json: the profile was measured for other layer shapes"));
  }
  EXPECT_THROW(StepProfile::from_json(nlohmann::json{{"chip", 1}}, "x"), std::invalid_argument);
  // One whose optimizer steps ran another optimizer is refused too.
  StepProfile lars = p;
  lars.optimizer = "lars";
  try {
    StepProfile::from_json(lars.to_json(), "p.json").check_matches(m, "p.json");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("measured with lars, not"));
  }
}

const BoxShape kFourBoxes{4, 8};

TEST(Cluster, TfConfigWorkersShareTheirHostsBox) {
  const Placement p = place_tf_config(
      R"({"cluster": {"worker": ["a:2222", "a:2223", "b:2222"]},
          "task": {"type": "worker", "index": 2}})",
      kFourBoxes);
  EXPECT_EQ(p.chips, (std::vector<int>{0, 1, 8}));
  EXPECT_EQ(p.description, "3 workers: a -> box 0 chips 0-1, b -> box 1 chip 8");
}

TEST(Cluster, TfConfigErrorsSayWhatIsWrong) {
  const auto fails = [](const std::string& text, const std::string& message) {
    try {
      place_tf_config(text, kFourBoxes);
      ADD_FAILURE() << text;
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr(message));
    }
  };
  fails(R"({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 2}})",
        "task index 2 out of range: the cluster has 2 workers");
  fails(R"({"cluster": {"worker": []}})", "cluster.worker must be a list");
  fails("{", "not JSON");
  fails(R"({"cluster": {"worker": ["a:1","b:1","c:1","d:1","e:1"]}})",
        "5 hosts, but the system has 4 boxes");
  fails(R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "ps", "index": 0}})",
        "task type 'ps'");
}

TEST(Cluster, HostListsGiveSlotsPerBox) {
  EXPECT_EQ(place_host_list("h1:2,h2:3", kFourBoxes).chips, (std::vector<int>{0, 1, 8, 9, 10}));
  EXPECT_EQ(place_host_list("h1,h2", kFourBoxes).chips.size(), 16u);  // a box's chips each
  try {
    place_host_list("h1:9", kFourBoxes);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("host h1 has 9 workers; a box has 8 chips"));
  }
  EXPECT_THROW(place_host_list("h1:x", kFourBoxes), std::invalid_argument);
  EXPECT_THROW(place_host_list("h1,,h2", kFourBoxes), std::invalid_argument);
}

// With several host servers a box (an IPU-POD64's up to four), each host is one server: a
// block of the box's chips.
TEST(Cluster, HostsAreServersWhenBoxesHaveSeveral) {
  const BoxShape pod64{2, 64, 4};
  const Placement p = place_host_list("h1:2,h2,h3:1", pod64);
  ASSERT_EQ(p.chips.size(), 19u);
  EXPECT_EQ(p.chips[2], 16);
  EXPECT_EQ(p.chips[18], 32);
  EXPECT_EQ(p.description,
            "19 workers: h1 -> box 0 server 0 chips 0-1, h2 -> box 0 server 1 chips 16-31, "
            "h3 -> box 0 server 2 chip 32");
  EXPECT_EQ(place_nodes(5, 1, pod64).chips.back(), 64);  // the second box's first server
  const auto fails = [&](const std::string& hosts, const std::string& message) {
    try {
      place_host_list(hosts, pod64);
      ADD_FAILURE() << hosts;
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr(message));
    }
  };
  fails("a:17", "host a has 17 workers; a host server has 16 chips");
  fails("a,b,c,d,e,f,g,h,i", "9 hosts, but the system has 8 host servers (2 boxes of 4 servers)");
}

TEST(Cluster, NodesTimesDevices) {
  const Placement p = place_nodes(2, 4, kFourBoxes);
  EXPECT_EQ(p.chips, (std::vector<int>{0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_THROW(place_nodes(5, 1, kFourBoxes), std::invalid_argument);
  EXPECT_THROW(place_nodes(1, 0, kFourBoxes), std::invalid_argument);
}

// GCL's replicas: a power of two in a linked ring of one box, or whole boxes' rings in turn.
TEST(Cluster, RingsOnIpuLinkLadders) {
  const ipulink::Ladder pod16 = ipulink::pod16_ladder();
  const BoxShape two_pods{2, 16};
  const Placement eight = place_rings(8, pod16, two_pods);
  EXPECT_EQ(eight.chips, ipulink::ring_order(pod16, 8));
  for (std::size_t i = 0; i < eight.chips.size(); ++i) {
    EXPECT_GT(
        ipulink::links_between(pod16, eight.chips[i], eight.chips[(i + 1) % eight.chips.size()]),
        0);
  }
  const Placement all = place_rings(32, pod16, two_pods);
  ASSERT_EQ(all.chips.size(), 32u);
  EXPECT_EQ(all.chips[16], 16 + all.chips[0]);  // the second box's ring, in the same order
  EXPECT_THROW(place_rings(12, pod16, two_pods), std::invalid_argument);
  EXPECT_THROW(place_rings(64, pod16, two_pods), std::invalid_argument);
}

// Pipelined replicas: stage s's IPUs are the s-th block, each a linked ring of its own.
TEST(Cluster, PipelineStagesTakeBlocksOfLinkedRings) {
  const ipulink::Ladder pod16 = ipulink::pod16_ladder();
  const BoxShape two_pods{2, 16};
  const Placement p = place_pipeline(16, 4, pod16, two_pods);
  ASSERT_EQ(p.chips.size(), 16u);
  for (int s = 0; s < 4; ++s) {
    for (int r = 0; r < 4; ++r) {
      const int ipu = p.chips[static_cast<std::size_t>(4 * s + r)];
      EXPECT_GE(ipu, 4 * s);
      EXPECT_LT(ipu, 4 * s + 4);
      const int next = p.chips[static_cast<std::size_t>(4 * s + (r + 1) % 4)];
      EXPECT_GT(ipulink::links_between(pod16, ipu, next), 0) << ipu << " to " << next;
    }
  }
  // Stages as large as a pod take whole pods.
  const Placement wide = place_pipeline(32, 2, pod16, two_pods);
  EXPECT_EQ(wide.chips[16], 16 + wide.chips[0]);
  EXPECT_THROW(place_pipeline(16, 3, pod16, two_pods), std::invalid_argument);  // not a multiple
  EXPECT_THROW(place_pipeline(24, 2, pod16, two_pods), std::invalid_argument);  // 12 replicas
  EXPECT_THROW(place_pipeline(64, 2, pod16, two_pods), std::invalid_argument);  // too many
}

// The cut is the best of all cuts into consecutive stages, on the slowest stage's forward and
// backward; the step is N + K - 1 slots (grouped: the slowest forward and the slowest backward,
// here one stage's, since every layer's backward is twice its forward).
TEST(IpuPipeline, TheCutBalancesTheStagesAndTheStepHasItsRamp) {
  ModelRequest r;
  r.name = "gpt";
  r.layers = 6;
  r.hidden = 256;
  r.heads = 4;
  r.sequence = 128;
  r.vocab = 8192;
  r.batch = 2;
  const Model m = make_model(r);
  const StepProfile profile = ipu_profile(m, ipulink::gc200(), "gc200", {}, false);
  const auto pass = [&](int first, int end) {
    core::TimePs t = 0;
    for (int i = first; i < end; ++i) {
      const LayerTiming& l = profile.shapes[static_cast<std::size_t>(m.layers[i])];
      t += l.forward_ps + l.backward_ps;
    }
    return t;
  };
  const int n = static_cast<int>(m.layers.size());
  core::TimePs best = std::numeric_limits<core::TimePs>::max();
  for (int a = 1; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      best = std::min(best, std::max({pass(0, a), pass(a, b), pass(b, n)}));
    }
  }
  const core::Bandwidth link = ipulink::gc200().ipu_link_rate_each_way();
  const IpuPipeline p = plan_ipu_pipeline(m, profile.shapes, ipulink::gc200(), 3, 8, link);
  ASSERT_EQ(p.stages.size(), 3u);
  core::TimePs slowest = 0;
  for (const PipelineStage& s : p.stages) {
    EXPECT_EQ(s.forward_ps + s.backward_ps, pass(s.first, s.end));
    slowest = std::max(slowest, s.forward_ps + s.backward_ps);
  }
  EXPECT_EQ(p.stages.front().first, 0);
  EXPECT_EQ(p.stages.back().end, n);
  EXPECT_EQ(slowest, best);
  EXPECT_GT(p.transfer_ps, 0u);
  EXPECT_EQ(p.slot_ps, slowest + 2 * p.transfer_ps);
  const Timeline t = pipeline_timeline(m, p, 8, 2);
  EXPECT_EQ(t.backward_ps, (8 + 3 - 1) * p.slot_ps);
  EXPECT_LE(t.forward_ps, t.backward_ps);
  // One stage is the unpipelined step.
  const IpuPipeline one = plan_ipu_pipeline(m, profile.shapes, ipulink::gc200(), 1, 8, link);
  const Timeline plain = step_timeline(m, profile.shapes, 2, 8);
  const Timeline same = pipeline_timeline(m, one, 8, 2);
  EXPECT_EQ(same.backward_ps, plain.backward_ps);
  EXPECT_EQ(same.optimizer_ps, plain.optimizer_ps);
}

// Graphcore's schedules over the same cut: grouped runs every forward in one phase and every
// backward in the next (the slowest of each), interleaved mixes them in a phase (two phases of the
// slowest of either) and holds fewer micro-batches, sequential runs one micro-batch at a time.
TEST(IpuPipeline, TheSchedulesTradeTimeForMemory) {
  ModelRequest r;
  r.batch = 2;
  const Model bert = make_model(r);
  const ipulink::IpuConfig ipu = ipulink::gc200();
  const StepProfile profile = ipu_profile(bert, ipu, "gc200", {}, false);
  const auto link = ipu.ipu_link_rate_each_way();
  const auto plan = [&](PipelineSchedule schedule) {
    return plan_ipu_pipeline(bert, profile.shapes, ipu, 4, 16, link, 1, {}, schedule);
  };
  const IpuPipeline grouped = plan(PipelineSchedule::kGrouped);
  const IpuPipeline interleaved = plan(PipelineSchedule::kInterleaved);
  const IpuPipeline sequential = plan(PipelineSchedule::kSequential);
  core::TimePs forward = 0, backward = 0, both = 0;
  for (const PipelineStage& s : grouped.stages) {
    forward = std::max(forward, s.forward_ps);
    backward = std::max(backward, s.backward_ps);
  }
  for (const PipelineStage& s : sequential.stages) both += s.forward_ps + s.backward_ps;
  const core::TimePs t = grouped.transfer_ps;
  EXPECT_EQ(grouped.slot_ps, forward + backward + 2 * t);
  EXPECT_EQ(grouped.slots(16), 16 + 3);
  EXPECT_GE(interleaved.slot_ps, grouped.slot_ps);  // backward is twice forward: 4F against 3F
  EXPECT_EQ(interleaved.slots(16), 16 + 3);
  EXPECT_EQ(sequential.slot_ps, both + 2 * 3 * t);
  EXPECT_EQ(sequential.slots(16), 16);
  EXPECT_EQ(pipeline_timeline(bert, sequential, 16, 2).backward_ps, 16 * sequential.slot_ps);
  // Stage 0 of 4 holds 7 micro-batches grouped, 4 interleaved, 1 sequentially.
  EXPECT_EQ(micro_batches_held(PipelineSchedule::kGrouped, 0, 4, 16), 7);
  EXPECT_EQ(micro_batches_held(PipelineSchedule::kGrouped, 3, 4, 16), 1);
  EXPECT_EQ(micro_batches_held(PipelineSchedule::kInterleaved, 0, 4, 16), 4);
  EXPECT_EQ(micro_batches_held(PipelineSchedule::kGrouped, 0, 4, 2), 2);
  EXPECT_EQ(micro_batches_held(PipelineSchedule::kSequential, 0, 4, 16), 1);
  EXPECT_GT(grouped.stages[0].memory_bytes, interleaved.stages[0].memory_bytes);
  // BERT-Large at micro-batch 4 fits four stages interleaved, not grouped.
  r.batch = 4;
  const Model large = make_model(r);
  const StepProfile p4 = ipu_profile(large, ipu, "gc200", {}, false);
  EXPECT_NO_THROW(
      plan_ipu_pipeline(large, p4.shapes, ipu, 4, 16, link, 1, {}, PipelineSchedule::kInterleaved));
  EXPECT_THROW(plan_ipu_pipeline(large, p4.shapes, ipu, 4, 16, link), std::invalid_argument);
  EXPECT_EQ(parse_schedule("interleaved"), PipelineSchedule::kInterleaved);
  EXPECT_THROW(parse_schedule("1f1b"), std::invalid_argument);
}

// Each stage must fit its IPU; when none can, the error says how much each would hold.
TEST(IpuPipeline, StagesThatDoNotFitAreRefused) {
  ModelRequest r;
  r.batch = 2;
  const Model bert = make_model(r);
  const ipulink::IpuConfig ipu = ipulink::gc200();
  const StepProfile profile = ipu_profile(bert, ipu, "gc200", {}, false);
  const IpuPipeline p =
      plan_ipu_pipeline(bert, profile.shapes, ipu, 4, 16, ipu.ipu_link_rate_each_way());
  for (const PipelineStage& s : p.stages) {
    EXPECT_LE(s.memory_bytes, static_cast<double>(ipu.memory_bytes()));
    // BERT-Large's optimizer state does not fit beside a quarter of it: it streams.
    EXPECT_TRUE(s.offloaded);
    EXPECT_GT(s.optimizer_ps, profile.shapes[0].optimizer_ps);
  }
  try {
    plan_ipu_pipeline(bert, profile.shapes, ipu, 2, 16, ipu.ipu_link_rate_each_way());
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("does not fit 2 pipeline stages"));
  }
  EXPECT_THROW(plan_ipu_pipeline(bert, profile.shapes, ipu, 26, 16, ipu.ipu_link_rate_each_way()),
               std::invalid_argument);
}

// Replicated tensor sharding: a stage keeps and updates 1/R of its optimizer state, so BERT-Large's
// stages, whose whole state streams from Streaming Memory, update a 16th of it in a 16th of the
// on-chip time, and stream only a 16th where even that does not fit.
TEST(IpuPipeline, AShardedOptimizerStateUpdatesAndStreamsAShare) {
  ModelRequest r;
  r.batch = 2;
  const Model bert = make_model(r);
  const ipulink::IpuConfig ipu = ipulink::gc200();
  const StepProfile profile = ipu_profile(bert, ipu, "gc200", {}, false);
  const auto link = ipu.ipu_link_rate_each_way();
  const auto update = [&](const PipelineStage& s) {
    core::TimePs t = 0;
    for (int i = s.first; i < s.end; ++i) {
      t += profile.shapes[static_cast<std::size_t>(bert.layers[static_cast<std::size_t>(i)])]
               .optimizer_ps;
    }
    return t;
  };
  const IpuPipeline whole = plan_ipu_pipeline(bert, profile.shapes, ipu, 4, 16, link);
  const IpuPipeline sharded = plan_ipu_pipeline(bert, profile.shapes, ipu, 4, 16, link, 16);
  EXPECT_EQ(sharded.state_shards, 16);
  ASSERT_EQ(sharded.stages.size(), 4u);
  for (std::size_t s = 0; s < 4; ++s) {
    const PipelineStage& w = whole.stages[s];
    const PipelineStage& h = sharded.stages[s];
    ASSERT_TRUE(w.offloaded);
    EXPECT_EQ(w.optimizer_ps, update(w) + ipu_streaming_ps(ipu, static_cast<double>(w.parameters)));
    EXPECT_EQ(
        h.optimizer_ps,
        update(h) / 16 +
            (h.offloaded ? ipu_streaming_ps(ipu, static_cast<double>(h.parameters) / 16) : 0));
    EXPECT_LE(h.memory_bytes, static_cast<double>(ipu.memory_bytes()));
  }
  EXPECT_THROW(plan_ipu_pipeline(bert, profile.shapes, ipu, 4, 16, link, 0), std::invalid_argument);
}

// Recomputation: each layer keeps its output alone and recomputes the rest in backward, so a
// backward pass costs a forward pass more and far larger batches fit: ResNet-50 at 16 images
// on one IPU, BERT-Large at 8 per micro-batch over four stages.
TEST(IpuProfile, RecomputationTradesAForwardPassForMemory) {
  const ipulink::IpuConfig ipu = ipulink::gc200();
  IpuWorkModel recompute;
  recompute.recompute = true;
  ModelRequest r;
  r.name = "resnet50";
  r.batch = 16;
  const Model resnet = make_model(r);
  EXPECT_THROW(ipu_profile(resnet, ipu, "gc200"), std::invalid_argument);
  const StepProfile plain = ipu_profile(resnet, ipu, "gc200", {}, false);
  const StepProfile again = ipu_profile(resnet, ipu, "gc200", recompute);
  for (std::size_t s = 0; s < plain.shapes.size(); ++s) {
    EXPECT_EQ(again.shapes[s].forward_ps, plain.shapes[s].forward_ps);
    EXPECT_EQ(again.shapes[s].backward_ps,
              plain.shapes[s].backward_ps + plain.shapes[s].forward_ps);
  }
  const IpuFootprint kept = ipu_footprint(resnet, resnet.layers);
  const IpuFootprint checkpoints = ipu_footprint(resnet, resnet.layers, recompute);
  EXPECT_LT(checkpoints.activations + checkpoints.recomputed, kept.activations / 2);
  EXPECT_EQ(checkpoints.resident, kept.resident);

  ModelRequest b;
  b.batch = 8;
  const Model bert = make_model(b);
  const auto link = ipu.ipu_link_rate_each_way();
  try {
    plan_ipu_pipeline(bert, ipu_profile(bert, ipu, "gc200", {}, false).shapes, ipu, 4, 16, link);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("or recompute activations (--recompute)"));
  }
  const IpuPipeline p =
      plan_ipu_pipeline(bert, ipu_profile(bert, ipu, "gc200", recompute, false).shapes, ipu, 4, 16,
                        link, 1, recompute);
  for (const PipelineStage& s : p.stages) {
    EXPECT_LE(s.memory_bytes, static_cast<double>(ipu.memory_bytes()));
  }
}

// ResNet-50: 3.8 billion multiply-adds per 224x224 image forward [T9] (torchvision's counting
// gives 4.1: its projections and classifier included).
TEST(LayerWork, ResNet50HasItsPublishedMultiplyAdds) {
  ModelRequest r;
  r.name = "resnet50";
  r.batch = 1;
  const Model m = make_model(r);
  double flops = 0, parameters = 0;
  for (int layer : m.layers) {
    const LayerWork w = layer_work(m.shapes[static_cast<std::size_t>(layer)]);
    flops += w.forward_flops;
    parameters += w.parameters;
  }
  EXPECT_GT(flops / 2, 3.8e9);
  EXPECT_LT(flops / 2, 4.2e9);
  EXPECT_EQ(parameters, 25557032.0);
}

// A transformer layer's matmuls: 2 x tokens x 12 h^2 (QKV, output, FFN of 4h) plus attention.
TEST(LayerWork, ATransformerLayerIsItsMatmuls) {
  const Model m = test::small_gpt();
  const LayerShape& s = m.shapes.front();
  ASSERT_EQ(s.kind, LayerKind::kTransformer);
  const auto& c = s.transformer;
  const double tokens = c.tokens(), h = c.hidden;
  const double attention = 4.0 * c.batch * c.sequence * c.sequence * h;
  EXPECT_DOUBLE_EQ(layer_work(s).forward_flops,
                   2 * tokens * (4 * h * h + 2 * h * c.ffn) + attention);
  EXPECT_DOUBLE_EQ(layer_work(s).backward_flops(), 2 * layer_work(s).forward_flops);
}

// Fused attention keeps nothing of the S x S scores for the backward pass: the probabilities,
// the dropped ones and the dropout's byte-a-score mask are what it saves.
TEST(LayerWork, FusedAttentionKeepsNoneOfTheScores) {
  workloads::TransformerConfig c;
  c.batch = 4;
  c.sequence = 512;
  c.hidden = 256;
  c.heads = 8;
  c.ffn = 1024;
  c.dropout = 0.1;
  LayerShape s;
  s.transformer = c;
  const LayerWork unfused = layer_work(s);
  s.transformer.fused_attention = true;
  const LayerWork fused = layer_work(s);
  // bf16: two bytes a score before and after the softmax, two dropped, one of the mask.
  const double scores = 4.0 * 8 * 512 * 512;
  EXPECT_DOUBLE_EQ(unfused.activation_bytes - fused.activation_bytes, 7 * scores);
  EXPECT_EQ(fused.forward_flops, unfused.forward_flops);  // the passes' work is the layer's
}

TEST(IpuProfile, TheRooflineTimesEachShapeAndBackwardIsTheLonger) {
  ModelRequest r;
  r.name = "resnet50";
  r.batch = 4;
  const Model m = make_model(r);
  const StepProfile p = ipu_profile(m, ipulink::gc200(), "gc200");
  ASSERT_EQ(p.shapes.size(), m.shapes.size());
  p.check_matches(m, "test");
  for (const LayerTiming& t : p.shapes) {
    EXPECT_GT(t.forward_ps, 0u);
    EXPECT_GT(t.backward_ps, t.forward_ps);
  }
  // The whole forward pass at least its FLOPs at the peak.
  double flops = 0;
  core::TimePs forward = 0;
  for (int layer : m.layers) {
    flops += layer_work(m.shapes[static_cast<std::size_t>(layer)]).forward_flops;
    forward += p.shapes[static_cast<std::size_t>(layer)].forward_ps;
  }
  EXPECT_GT(static_cast<double>(forward), flops / 250e12 * 1e12);
}

// What does not fit an IPU's memory is refused up front, with the batch that would fit.
TEST(IpuProfile, AReplicaThatDoesNotFitIsRefusedWithAdvice) {
  ModelRequest r;
  r.name = "resnet50";
  r.batch = 256;
  try {
    ipu_profile(make_model(r), ipulink::gc200(), "gc200");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("In-Processor-Memory; a per-worker batch of at most"));
  }
  r.name = "bert-large";
  r.batch = 1;
  try {
    ipu_profile(make_model(r), ipulink::gc200(), "gc200");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("weights and gradients alone do not fit: pipeline each "
                                    "replica over at least 2 IPUs (--pipeline)"));
  }
}

}  // namespace
}  // namespace podsim::training
