// Each TEST runs in its own process (see sc_test_main.cpp), so each may build its own modules.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <systemc>
#include <vector>

#include "core/log.h"

namespace {

int formatted = 0;

// Counts how often it is formatted, to show that disabled messages cost no formatting.
struct Probe {};

}  // namespace

template <>
struct fmt::formatter<Probe> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(const Probe&, Context& ctx) const {
    ++formatted;
    return fmt::formatter<std::string_view>::format("probe", ctx);
  }
};

namespace podsim::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

LogLevels parse_or_die(std::string_view spec) {
  std::string error;
  auto levels = parse_log_spec(spec, &error);
  EXPECT_TRUE(levels.has_value()) << error;
  return levels.value_or(LogLevels{});
}

TEST(LogSpec, BareLevelSetsTheDefault) {
  const LogLevels levels = parse_or_die("debug");
  EXPECT_EQ(levels.default_level, LogLevel::kDebug);
  EXPECT_TRUE(levels.modules.empty());
}

TEST(LogSpec, ModuleLevelsKeepTheirOrder) {
  const LogLevels levels = parse_or_die("hbm=debug, fabric = trace,error");
  EXPECT_EQ(levels.default_level, LogLevel::kError);
  EXPECT_THAT(levels.modules,
              ElementsAre(Pair("hbm", LogLevel::kDebug), Pair("fabric", LogLevel::kTrace)));
}

TEST(LogSpec, EveryLevelNameParses) {
  for (LogLevel level : {LogLevel::kError, LogLevel::kWarning, LogLevel::kInfo, LogLevel::kDebug,
                         LogLevel::kTrace}) {
    EXPECT_EQ(parse_log_level(to_string(level)), level) << to_string(level);
  }
  EXPECT_EQ(LogLevels{}.default_level, LogLevel::kWarning);
}

TEST(LogSpec, BadSpecsNameTheTokenAndListLevels) {
  const struct {
    const char* spec;
    const char* mentions;
  } cases[] = {
      {"verbose", "unknown level 'verbose'"},
      {"hbm=loud", "in 'hbm=loud'"},
      {"hbm=", "unknown level ''"},
      {"=debug", "bad module name ''"},
      {"a..b=debug", "bad module name 'a..b'"},
      {"chip .hbm=debug", "bad module name 'chip .hbm'"},
      {"hbm=debug=x", "unknown level 'debug=x'"},
      {"info,,hbm=debug", "empty entry"},
      {"info,", "empty entry"},
      {"", "no entries"},
      {"INFO", "unknown level 'INFO'"},
  };
  for (const auto& c : cases) {
    std::string error;
    EXPECT_FALSE(parse_log_spec(c.spec, &error).has_value()) << c.spec;
    EXPECT_THAT(error, HasSubstr(c.mentions)) << c.spec;
    EXPECT_THAT(error, HasSubstr("error, warning, info, debug, trace")) << c.spec;
  }
  EXPECT_FALSE(parse_log_spec("nope").has_value());  // the error text is optional
}

TEST(LogLevels, PatternsMatchNamePrefixOrInstanceFamily) {
  LogLevels levels = parse_or_die("system.chip0.hbm1=trace,error");
  EXPECT_EQ(levels.level_for("system.chip0.hbm1"), LogLevel::kTrace);        // full name
  EXPECT_EQ(levels.level_for("system.chip0.hbm1.bank2"), LogLevel::kTrace);  // child
  EXPECT_EQ(levels.level_for("system.chip0.hbm10"), LogLevel::kError);       // not a dotted prefix

  levels = parse_or_die("hbm=debug,error");
  EXPECT_EQ(levels.level_for("system.chip0.hbm1"), LogLevel::kDebug);
  EXPECT_EQ(levels.level_for("hbm"), LogLevel::kDebug);
  EXPECT_EQ(levels.level_for("system.chip0.hbm1.bank2"), LogLevel::kDebug);
  EXPECT_EQ(levels.level_for("system.chip0.hbmx1"), LogLevel::kError);
  EXPECT_EQ(levels.level_for("system.chip0.xhbm1"), LogLevel::kError);
  EXPECT_EQ(levels.level_for("system.chip0.dma0"), LogLevel::kError);

  levels = parse_or_die("chip1=info,error");  // a segment as written matches too
  EXPECT_EQ(levels.level_for("system.chip1.nic0"), LogLevel::kInfo);
  EXPECT_EQ(levels.level_for("system.chip10.nic0"), LogLevel::kError);
}

TEST(LogLevels, LongestPatternWins) {
  const LogLevels levels = parse_or_die("system.chip0.hbm1=trace,chip0=info,hbm=debug");
  EXPECT_EQ(levels.level_for("system.chip0.hbm1"), LogLevel::kTrace);
  EXPECT_EQ(levels.level_for("system.chip0.hbm2"), LogLevel::kInfo);
  EXPECT_EQ(levels.level_for("system.chip1.hbm2"), LogLevel::kDebug);
  EXPECT_EQ(levels.level_for("system.chip1.dma0"), LogLevel::kWarning);
  // Equal length: the later entry wins, as a later command-line option would.
  EXPECT_EQ(parse_or_die("hbm=debug,dma=trace").level_for("x.hbm0.dma1"), LogLevel::kTrace);
  EXPECT_EQ(parse_or_die("dma=trace,hbm=debug").level_for("x.hbm0.dma1"), LogLevel::kDebug);
}

struct Leaf : sc_core::sc_module {
  explicit Leaf(sc_core::sc_module_name name) : sc_core::sc_module(name) {}
};

struct System : sc_core::sc_module {
  Leaf hbm1{"hbm1"};
  Leaf dma0{"dma0"};
  explicit System(sc_core::sc_module_name name = "system") : sc_core::sc_module(name) {}
};

TEST(LogFiltering, LevelsApplyPerModule) {
  System system;
  set_log_levels(parse_or_die("hbm=debug,warning"));
  EXPECT_TRUE(log_enabled(system.hbm1, LogLevel::kDebug));
  EXPECT_FALSE(log_enabled(system.hbm1, LogLevel::kTrace));
  EXPECT_FALSE(log_enabled(system.dma0, LogLevel::kInfo));
  EXPECT_TRUE(log_enabled(system.dma0, LogLevel::kWarning));
  EXPECT_TRUE(log_enabled(system.dma0, LogLevel::kError));
  EXPECT_EQ(log_level_for("system.hbm1"), LogLevel::kDebug);

  // New levels replace cached answers.
  set_log_levels(parse_or_die("dma=trace,error"));
  EXPECT_FALSE(log_enabled(system.hbm1, LogLevel::kWarning));
  EXPECT_TRUE(log_enabled(system.dma0, LogLevel::kTrace));
  EXPECT_EQ(log_level_for("system.hbm1"), LogLevel::kError);
}

TEST(LogFiltering, DisabledMessagesAreNotFormatted) {
  System system;
  set_log_levels(parse_or_die("hbm=info,warning"));
  PODSIM_LOG(system.dma0, kInfo, "{}", Probe{});
  PODSIM_LOG(system.hbm1, kDebug, "{}", Probe{});
  EXPECT_EQ(formatted, 0);
  PODSIM_LOG(system.hbm1, kInfo, "{}", Probe{});
  EXPECT_EQ(formatted, 1);
}

// Logs from inside the simulation so that reports carry a non-zero time.
struct Talker : sc_core::sc_module {
  SC_HAS_PROCESS(Talker);
  explicit Talker(sc_core::sc_module_name name) : sc_core::sc_module(name) { SC_METHOD(talk); }
  void talk() {
    if (sc_core::sc_time_stamp() == sc_core::SC_ZERO_TIME) {
      next_trigger(sc_core::sc_time(1'234'567, sc_core::SC_PS));
      return;
    }
    PODSIM_LOG(*this, kInfo, "moved {} bytes", 64);
    PODSIM_LOG(*this, kDebug, "bank {} open", 3);
    PODSIM_LOG(*this, kTrace, "row {:#x}", 0x1f);
    PODSIM_LOG(*this, kWarning, "queue {} full", "rx");
  }
};

struct TalkingSystem : sc_core::sc_module {
  Talker hbm1{"hbm1"};
  Talker dma0{"dma0"};
  explicit TalkingSystem(sc_core::sc_module_name name = "system") : sc_core::sc_module(name) {}
};

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(LogReportHandler, PrintsTimeLevelAndModuleOnStderr) {
  TalkingSystem system;
  set_log_levels(parse_or_die("hbm=trace,info"));
  const auto previous = sc_core::sc_report_handler::get_handler();
  install_report_handler();
  reset_report_counts();
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  sc_core::sc_start();
  const std::string err = testing::internal::GetCapturedStderr();
  const std::string out = testing::internal::GetCapturedStdout();
  sc_core::sc_report_handler::set_handler(previous);

  // The two modules run in the same delta cycle, in an order SystemC does not promise.
  EXPECT_THAT(lines(err), UnorderedElementsAre("1.234567 us info system.hbm1: moved 64 bytes",
                                               "1.234567 us debug system.hbm1: bank 3 open",
                                               "1.234567 us trace system.hbm1: row 0x1f",
                                               "1.234567 us warning system.hbm1: queue rx full",
                                               "1.234567 us info system.dma0: moved 64 bytes",
                                               "1.234567 us warning system.dma0: queue rx full"));
  EXPECT_EQ(err.back(), '\n');
  EXPECT_EQ(out, "");
  EXPECT_EQ(warning_count(), 2u);
  EXPECT_EQ(error_count(), 0u);
}

TEST(LogReportHandler, ErrorsAreCountedAndStillThrow) {
  System system;
  const auto previous = sc_core::sc_report_handler::get_handler();
  install_report_handler();
  reset_report_counts();
  try {
    PODSIM_LOG(system.hbm1, kError, "bad address {:#x}", 0xdead);
    ADD_FAILURE() << "expected the error to throw";
  } catch (const sc_core::sc_report& report) {
    EXPECT_STREQ(report.get_msg_type(), "system.hbm1");
    EXPECT_STREQ(report.get_msg(), "bad address 0xdead");
  }
  sc_core::sc_report_handler::set_handler(previous);
  EXPECT_EQ(error_count(), 1u);
  EXPECT_EQ(warning_count(), 0u);
}

}  // namespace
}  // namespace podsim::core
