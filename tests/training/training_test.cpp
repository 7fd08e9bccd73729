// The training arithmetic without the kernel: models' parameters, the step's timeline, DDP's
// buckets, and compute profiles as files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "training/model.h"
#include "training/profile.h"
#include "training/timeline.h"

namespace podsim::training {
namespace {

using ::testing::HasSubstr;

TEST(Model, BertLargeHasItsPublishedSize) {
  const Model m = make_model({});
  EXPECT_EQ(m.layers.size(), 25u);  // 24 layers and the head
  // Devlin et al.: 340 M, of which the pooler (1 M) and the masked-LM transform (1 M) are not
  // modeled.
  EXPECT_NEAR(static_cast<double>(m.parameters()) * 1e-6, 334.1, 0.1);
  EXPECT_EQ(m.batch, 64u);
  EXPECT_EQ(m.shapes[2].head.tokens, 64u * 128u);
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
  r.name = "resnet";
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

Model three_layers() {
  ModelRequest r;
  r.name = "gpt";
  r.layers = 2;
  r.hidden = 64;
  r.heads = 2;
  r.sequence = 16;
  r.vocab = 100;
  r.batch = 2;
  return make_model(r);
}

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
  p.host_ops = {"softmax_bwd"};
  const StepProfile q = StepProfile::from_json(p.to_json(), "p.json");
  EXPECT_EQ(q.chip, "gaudi2");
  EXPECT_EQ(q.keys, p.keys);
  EXPECT_EQ(q.shapes[2].backward_ps, 8u);
  EXPECT_EQ(q.host_ops, p.host_ops);
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
}

}  // namespace
}  // namespace podsim::training
