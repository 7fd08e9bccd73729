// Configuration loading and binding: extends, overrides, and every kind of bad input reported
// once with its file:line:column and full key path.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "core/config_binding.h"
#include "core/config_tree.h"
#include "tests/support/test_support.h"

namespace podsim::core {
namespace {

using ::testing::HasSubstr;

struct LinkConfig {
  Bandwidth rate{100e9};
  Duration delay{};
  template <class V>
  void describe(V& v) {
    v.field("rate", rate, Spec("line rate").positive());
    v.field("delay", delay, Spec("propagation delay").required().min(0));
  }
};

enum class Shape { kRing, kMesh };

struct PartConfig {
  std::string name;
  int ports = 4;
  ByteSize buffer{1 << 20};
  bool lossless = true;
  Shape shape = Shape::kRing;
  LinkConfig link;
  std::vector<LinkConfig> extra;
  template <class V>
  void describe(V& v) {
    v.field("name", name, Spec("name").required());
    v.field("ports", ports, Spec("port count").range(1, 64));
    v.field("buffer", buffer, Spec("buffer size"));
    v.field("lossless", lossless, Spec("PFC on"));
    v.choice("shape", shape, Choices<Shape>{{"ring", Shape::kRing}, {"mesh", Shape::kMesh}},
             Spec("wiring"));
    v.section("link", link, Spec("link"));
    v.list("extra", extra, Spec("extra links"));
  }
  void check(ConfigChecks& c) const {
    if (ports > 8 && !lossless) c.fail("ports", "more than 8 lossy ports need PFC");
  }
};

PartConfig bind_text(const std::string& text) {
  return bind_config<PartConfig>(parse_yaml(text, "part.yaml"));
}

// The diagnostics of a bind that must fail.
std::vector<Diagnostic> bind_errors(const std::string& text) {
  try {
    bind_text(text);
  } catch (const ConfigError& e) {
    return e.diagnostics();
  }
  ADD_FAILURE() << "binding succeeded:\n" << text;
  return {};
}

TEST(ConfigBinding, BindsEveryValueKind) {
  const auto c = bind_text(
      "name: p\nports: 8\nbuffer: 2MiB\nlossless: false\nshape: mesh\n"
      "link: {rate: 12.5GB/s, delay: 1us}\nextra:\n  - {delay: 5ns}\n  - {rate: 200Gbps, delay: "
      "0ns}\n");
  EXPECT_EQ(c.name, "p");
  EXPECT_EQ(c.ports, 8);
  EXPECT_EQ(c.buffer.bytes, 2u << 20);
  EXPECT_FALSE(c.lossless);
  EXPECT_EQ(c.shape, Shape::kMesh);
  EXPECT_DOUBLE_EQ(c.link.rate.bits_per_second, 100e9);
  EXPECT_EQ(c.link.delay.ps, 1000000);
  ASSERT_EQ(c.extra.size(), 2u);
  EXPECT_EQ(c.extra[0].delay.ps, 5000);
  EXPECT_DOUBLE_EQ(c.extra[1].rate.bits_per_second, 200e9);
}

TEST(ConfigBinding, KeepsDefaultsForKeysNotGiven) {
  const auto c = bind_text("name: p\nlink: {delay: 1ns}\n");
  EXPECT_EQ(c.ports, 4);
  EXPECT_EQ(c.buffer.bytes, 1u << 20);
  EXPECT_TRUE(c.lossless);
}

TEST(ConfigBinding, UnknownKeySuggestsTheClosestAndGivesLineAndColumn) {
  const auto errors = bind_errors("name: p\nlink:\n  delay: 1ns\n  raet: 10Gbps\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "link.raet");
  EXPECT_EQ(errors[0].to_string(),
            "part.yaml:4:3: error: key 'link.raet': unknown key; did you mean 'rate'?");
}

TEST(ConfigBinding, UnknownKeyFarFromAnyListsTheKnownKeys) {
  const auto errors = bind_errors("name: p\nlink: {delay: 1ns}\ncolour: blue\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0].message, HasSubstr("known keys here: name, ports"));
}

TEST(ConfigBinding, BadUnitNamesKeyLineAndAcceptedUnits) {
  const auto errors = bind_errors("name: p\nlink:\n  delay: 1ns\n  rate: 100Gbs\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0].to_string(), HasSubstr("part.yaml:4:9: error: key 'link.rate'"));
  EXPECT_THAT(errors[0].message, HasSubstr("unknown unit 'Gbs'"));
}

TEST(ConfigBinding, UnitlessNumberWhereAUnitIsNeededIsAnError) {
  const auto errors = bind_errors("name: p\nlink: {delay: 1ns, rate: 100}\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "link.rate");
  EXPECT_THAT(errors[0].message, HasSubstr("has no unit"));
}

TEST(ConfigBinding, NegativeBandwidthIsOutOfRange) {
  const auto errors = bind_errors("name: p\nlink: {delay: 1ns, rate: -100Gbps}\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "link.rate");
  EXPECT_THAT(errors[0].message, HasSubstr("must be greater than zero, got -100Gbps"));
  EXPECT_EQ(errors[0].where.line, 2);
}

TEST(ConfigBinding, IntegerRangeMessageGivesTheBound) {
  const auto errors = bind_errors("name: p\nports: 99\nlink: {delay: 1ns}\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].to_string(), "part.yaml:2:8: error: key 'ports': must be at most 64, got 99");
}

TEST(ConfigBinding, WrongTypesAreNamed) {
  const auto errors = bind_errors(
      "name: p\nports: four\nlossless: maybe\nshape: ringg\nlink: 5\nextra: {delay: 1ns}\n");
  ASSERT_EQ(errors.size(), 5u);
  EXPECT_THAT(errors[0].message, HasSubstr("'four' is not an integer"));
  EXPECT_THAT(errors[1].message, HasSubstr("'maybe' is not a boolean"));
  EXPECT_THAT(errors[2].message, HasSubstr("not one of: ring, mesh; did you mean 'ring'?"));
  EXPECT_EQ(errors[3].key_path, "link");
  EXPECT_THAT(errors[3].message, HasSubstr("expected a section"));
  EXPECT_EQ(errors[4].key_path, "extra");
  EXPECT_THAT(errors[4].message, HasSubstr("expected a list"));
}

TEST(ConfigBinding, SectionWhereAValueBelongsIsAnError) {
  const auto errors = bind_errors("name: p\nports: {a: 1}\nlink: {delay: 1ns}\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0].message, HasSubstr("expected a integer, found a section"));
}

TEST(ConfigBinding, MissingRequiredKeysAreReportedAtTheirSection) {
  const auto errors = bind_errors("ports: 2\nlink:\n  rate: 10Gbps\n");
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].key_path, "name");
  EXPECT_THAT(errors[0].message, HasSubstr("required key is missing"));
  EXPECT_EQ(errors[1].key_path, "link.delay");
  EXPECT_EQ(errors[1].where.line, 3);  // the 'link' mapping starts on line 3
}

TEST(ConfigBinding, MissingRequiredKeyInsideAnAbsentSectionIsStillReported) {
  const auto errors = bind_errors("name: p\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "link.delay");
}

TEST(ConfigBinding, ListItemsAreNamedByIndex) {
  const auto errors =
      bind_errors("name: p\nlink: {delay: 1ns}\nextra:\n  - {delay: 1ns}\n  - {delay: 1}\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "extra.1.delay");
  EXPECT_EQ(errors[0].where.line, 5);
}

TEST(ConfigBinding, EveryProblemIsReportedOnce) {
  const auto errors = bind_errors("ports: 0\nbogus: 1\nlink: {rate: 0Gbps}\n");
  ASSERT_EQ(errors.size(), 5u);  // name missing, ports, bogus, link.rate, link.delay missing
  std::set<std::string> keys;
  for (const auto& e : errors) keys.insert(e.key_path);
  EXPECT_EQ(keys.size(), errors.size());
}

TEST(ConfigBinding, CrossKeyChecksPointAtTheKey) {
  const auto errors = bind_errors("name: p\nports: 12\nlossless: false\nlink: {delay: 1ns}\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].to_string(),
            "part.yaml:2:8: error: key 'ports': more than 8 lossy ports need PFC");
}

TEST(ConfigBinding, KeysOnlyModeSkipsCrossKeyChecks) {
  const auto tree =
      parse_yaml("name: p\nports: 12\nlossless: false\nlink: {delay: 1ns}\n", "p.yaml");
  const auto c = bind_config<PartConfig>(tree, BindChecks::kKeysOnly);
  EXPECT_EQ(c.ports, 12);
  EXPECT_EQ(cross_key_problems(c, tree).size(), 1u);
}

TEST(ConfigBinding, ValidateConfigChecksStructsBuiltInCode) {
  PartConfig c;
  c.name = "p";
  EXPECT_NO_THROW(validate_config(c));
  c.link.rate = Bandwidth{-1};
  try {
    validate_config(c);
    FAIL() << "negative rate accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("link.rate: must be greater than zero"));
  }
  c.link.rate = Bandwidth{1e9};
  c.ports = 10;
  c.lossless = false;
  EXPECT_THROW(validate_config(c), std::invalid_argument);
}

TEST(ConfigBinding, PrintShowsValuesAsWrittenAndMarksDefaults) {
  const auto tree = parse_yaml("name: p\nlink: {delay: 1.5us, rate: 12.5GB/s}\n", "p.yaml");
  const auto c = bind_config<PartConfig>(tree);
  const std::string yaml = print_config(c, tree);
  EXPECT_THAT(yaml, HasSubstr("name: p\n"));
  EXPECT_THAT(yaml, HasSubstr("ports: 4  # default\n"));
  EXPECT_THAT(yaml, HasSubstr("  rate: 12.5GB/s\n"));
  EXPECT_THAT(yaml, HasSubstr("  delay: 1.5us\n"));
  EXPECT_THAT(yaml, HasSubstr("shape: ring  # default\n"));
  // The printed YAML binds back to the same values.
  const auto again = bind_config<PartConfig>(parse_yaml(yaml, "printed"));
  EXPECT_EQ(again.link.delay, c.link.delay);
  EXPECT_EQ(again.link.rate, c.link.rate);
}

TEST(ConfigBinding, SchemaListsEveryKeyWithKindAndDefault) {
  const auto rows = config_schema<PartConfig>();
  std::vector<std::string> paths;
  for (const auto& r : rows) paths.push_back(r.path);
  EXPECT_THAT(paths,
              ::testing::ElementsAre("name", "ports", "buffer", "lossless", "shape", "link.rate",
                                     "link.delay", "extra", "extra[].rate", "extra[].delay"));
  EXPECT_EQ(rows[1].kind, "integer");
  EXPECT_EQ(rows[1].default_text, "4");
  EXPECT_EQ(rows[1].range, ">= 1, <= 64");
  EXPECT_TRUE(rows[0].required);
  EXPECT_EQ(rows[4].kind, "one of: ring, mesh");
  EXPECT_EQ(rows[5].kind, "bandwidth");
}

// ---------------------------------------------------------------------------------------------
// YAML, presets, extends and overrides

TEST(ConfigTree, MalformedYamlGivesLineAndColumn) {
  try {
    parse_yaml("a: 1\nb: [1, 2\nc: 3\n", "bad.yaml");
    FAIL() << "parsed";
  } catch (const ConfigError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_THAT(e.what(), HasSubstr("bad.yaml:"));
    EXPECT_THAT(e.what(), HasSubstr("malformed YAML"));
    EXPECT_GT(e.diagnostics()[0].where.line, 1);
  }
}

TEST(ConfigTree, DuplicateKeysAreAnError) {
  try {
    parse_yaml("a: 1\nb: 2\na: 3\n", "dup.yaml");
    FAIL() << "parsed";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "dup.yaml:3:1: error: key 'a': appears twice in one mapping (first at line 1)");
  }
}

TEST(ConfigTree, TopLevelMustBeAMapping) {
  EXPECT_THROW(parse_yaml("- 1\n- 2\n", "list.yaml"), ConfigError);
}

class PresetTest : public ::testing::Test {
 protected:
  PresetTest() : loader_({dir_.path()}) {
    loader_.nest("systems", "chip", "chips");
    dir_.write("chips/small.yaml", "name: small\nnic:\n  ports: 4\n  port_speed: 100Gbps\n");
    dir_.write("chips/big.yaml", "extends: small\nname: big\nnic:\n  ports: 16\n");
    dir_.write("systems/base.yaml", "name: base\nchip: small\nbox:\n  chips: 4\n");
    dir_.write("systems/derived.yaml", "extends: base\nname: derived\nbox:\n  links: 2\n");
    dir_.write("systems/loop_a.yaml", "extends: loop_b\n");
    dir_.write("systems/loop_b.yaml", "extends: loop_a\n");
  }
  std::string text_of(const ConfigNode& n, const std::string& path) {
    const ConfigNode* v = n.find_path(path);
    return v ? v->text() : "<absent>";
  }
  test::TempDir dir_;
  ConfigLoader loader_;
};

TEST_F(PresetTest, ExtendsMergesKeyByKey) {
  const auto tree = loader_.load("systems", "derived");
  EXPECT_EQ(text_of(tree, "name"), "derived");
  EXPECT_EQ(text_of(tree, "box.chips"), "4");
  EXPECT_EQ(text_of(tree, "box.links"), "2");
  EXPECT_EQ(text_of(tree, "chip.name"), "small");
  EXPECT_EQ(tree.find("extends"), nullptr);
}

TEST_F(PresetTest, NestedPresetKeepsItsSourceLocation) {
  const auto tree = loader_.load("systems", "base");
  const ConfigNode* ports = tree.find_path("chip.nic.ports");
  ASSERT_NE(ports, nullptr);
  EXPECT_THAT(ports->where().file, HasSubstr("chips/small.yaml"));
  EXPECT_EQ(ports->where().line, 3);
}

TEST_F(PresetTest, ChipPresetsExtendEachOther) {
  const auto tree = loader_.load("chips", "big");
  EXPECT_EQ(text_of(tree, "nic.ports"), "16");
  EXPECT_EQ(text_of(tree, "nic.port_speed"), "100Gbps");
}

TEST_F(PresetTest, OverridesReachInheritedKeys) {
  const auto tree = loader_.load("systems", "derived", {"chip.nic.ports=20", "box.chips=8"});
  EXPECT_EQ(text_of(tree, "chip.nic.ports"), "20");
  EXPECT_EQ(text_of(tree, "chip.nic.port_speed"), "100Gbps");
  EXPECT_EQ(text_of(tree, "box.chips"), "8");
  EXPECT_EQ(tree.find_path("chip.nic.ports")->where().to_string(),
            "command line (--set chip.nic.ports=20)");
}

TEST_F(PresetTest, OverrideCanSwapTheNestedPreset) {
  const auto tree = loader_.load("systems", "base", {"chip=big"});
  EXPECT_EQ(text_of(tree, "chip.name"), "big");
  EXPECT_EQ(text_of(tree, "chip.nic.ports"), "16");
}

TEST_F(PresetTest, UnknownPresetSuggestsAndListsPresets) {
  try {
    loader_.load("systems", "bsae");
    FAIL() << "loaded";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown system preset 'bsae'; did you mean 'base'?"));
    EXPECT_THAT(e.what(), HasSubstr("presets: base, derived"));
  }
}

TEST_F(PresetTest, UnknownNestedPresetIsLocatedAtItsKey) {
  dir_.write("systems/typo.yaml", "name: t\nchip: smal\n");
  try {
    loader_.load("systems", "typo");
    FAIL() << "loaded";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("systems/typo.yaml:2:7: error: unknown chip preset 'smal'; "
                                    "did you mean 'small'?"));
  }
}

TEST_F(PresetTest, ExtendsCycleIsAnError) {
  try {
    loader_.load("systems", "loop_a");
    FAIL() << "loaded";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("through a cycle"));
  }
}

TEST_F(PresetTest, FilesCanExtendPresets) {
  const auto file = dir_.write("mine.yaml", "extends: base\nname: mine\n");
  const auto tree = loader_.load("systems", file.string());
  EXPECT_EQ(text_of(tree, "name"), "mine");
  EXPECT_EQ(text_of(tree, "chip.name"), "small");
}

TEST_F(PresetTest, MissingFileIsAnError) {
  EXPECT_THROW(loader_.load("systems", "/nonexistent/x.yaml"), ConfigError);
}

TEST(ConfigOverride, SetsNestedValuesAndSequenceItems) {
  auto tree = parse_yaml("a:\n  b: 1\nlist:\n  - {x: 1}\n  - {x: 2}\n", "t.yaml");
  apply_override(tree, "a.b=5");
  apply_override(tree, "a.c.d=[1, 2]");
  apply_override(tree, "list.1.x=9");
  EXPECT_EQ(tree.find_path("a.b")->text(), "5");
  EXPECT_TRUE(tree.find_path("a.c.d")->is_sequence());
  EXPECT_EQ(tree.find_path("list.1.x")->text(), "9");
}

TEST(ConfigOverride, BadAssignmentsAreErrors) {
  auto tree = parse_yaml("a:\n  b: 1\nlist: [1]\n", "t.yaml");
  for (const char* bad : {"novalue", "=3", "a.b.c=1", "a..b=1", "list.7=1", "a=[1, 2"}) {
    EXPECT_THROW(apply_override(tree, bad), ConfigError) << bad;
  }
}

TEST(ConfigSuggestions, ClosestMatchFindsTyposOnly) {
  EXPECT_EQ(closest_match("prots", {"ports", "port_speed", "mtu"}), "ports");
  EXPECT_EQ(closest_match("hls3", {"hls1", "hls2"}), "hls1");
  EXPECT_EQ(closest_match("zebra", {"ports", "mtu"}), "");
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

}  // namespace
}  // namespace podsim::core
