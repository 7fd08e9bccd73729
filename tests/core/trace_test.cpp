#include "core/trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <functional>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <string>

#include "tests/support/chrome_trace_check.h"
#include "tests/support/test_support.h"

namespace podsim::core {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::check_chrome_trace;
using test::read_text;
using test::TempDir;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(TraceFormatMicroseconds, IsExactDecimal) {
  EXPECT_EQ(format_microseconds(0), "0.000000");
  EXPECT_EQ(format_microseconds(1), "0.000001");
  EXPECT_EQ(format_microseconds(999'999), "0.999999");
  EXPECT_EQ(format_microseconds(1'000'000), "1.000000");
  EXPECT_EQ(format_microseconds(1'234'567), "1.234567");
  EXPECT_EQ(format_microseconds(3'600'000'000'000'001), "3600000000.000001");
  EXPECT_EQ(format_microseconds(std::numeric_limits<TimePs>::max()), "18446744073709.551615");
}

// Events of one phase, in file order.
std::vector<json> events_of(const json& trace, const std::string& ph) {
  std::vector<json> out;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == ph) out.push_back(e);
  }
  return out;
}

TEST(TraceWriter, WritesATraceThatLoads) {
  TempDir dir;
  const std::string path = (dir / "run.json").string();
  TraceWriter trace;
  trace.open(path);
  ASSERT_TRUE(trace.enabled());
  const TrackId hbm = trace.track("system.chip0.hbm1");
  trace.span(hbm, "read", 1'234'567, 1'334'567);
  trace.span(hbm, "write", 2'000'000, 2'000'080, {{"bytes", 64}, {"bank", 3}});
  trace.counter(hbm, "queue_depth", 1'234'567, 2.5);
  trace.instant(hbm, "refresh", 5);
  trace.close();
  EXPECT_FALSE(trace.enabled());

  const std::string text = read_text(path);
  EXPECT_THAT(text, HasSubstr("\"ts\":1.234567,"));
  EXPECT_THAT(text, HasSubstr("\"dur\":0.100000"));
  const json parsed = json::parse(text);
  EXPECT_THAT(check_chrome_trace(parsed), IsEmpty());
  EXPECT_EQ(parsed["displayTimeUnit"], "ns");

  const auto spans = events_of(parsed, "X");
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0]["name"], "read");
  EXPECT_EQ(spans[1]["dur"], 0.00008);
  EXPECT_EQ(spans[1]["args"], json({{"bytes", 64}, {"bank", 3}}));
  const auto counters = events_of(parsed, "C");
  ASSERT_EQ(counters.size(), 1u);
  EXPECT_EQ(counters[0]["name"], "hbm1.queue_depth");
  EXPECT_EQ(counters[0]["args"]["value"], 2.5);
  const auto instants = events_of(parsed, "i");
  ASSERT_EQ(instants.size(), 1u);
  EXPECT_EQ(instants[0]["s"], "t");
  EXPECT_EQ(instants[0]["ts"], 0.000005);
}

// Back-to-back and overlapping transfers read as one busy span; a gap starts another; the open
// span is written when the trace closes, through the owner's close hook.
TEST(BusySpans, MergesBackToBackActivityAndFlushesOnClose) {
  TempDir dir;
  const std::string path = (dir / "busy.json").string();
  TraceWriter trace;
  trace.open(path);
  BusySpans busy(trace, trace.track("system.chip0.hbm.ch00"));
  trace.add_close_hook([&busy] { busy.flush(); });
  const std::uint64_t removed = trace.add_close_hook([] { FAIL() << "a removed hook ran"; });
  trace.remove_close_hook(removed);
  busy.add(1'000'000, 2'000'000, 64, 0);
  busy.add(2'000'000, 3'000'000, 0, 32);   // touches: merged
  busy.add(2'500'000, 2'600'000, 64, 0);   // inside: merged
  busy.add(5'000'000, 6'000'000, 128, 0);  // after a gap: a new span, left open
  busy.add(500'000, 700'000, 64, 0);  // late: merged, reaching back only to the last span's end
  trace.close();
  const json parsed = json::parse(read_text(path));
  EXPECT_THAT(check_chrome_trace(parsed), IsEmpty());
  const auto spans = events_of(parsed, "X");
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0]["ts"], 1.0);
  EXPECT_EQ(spans[0]["dur"], 2.0);
  EXPECT_EQ(spans[0]["args"], json({{"bytes_read", 128}, {"bytes_written", 32}}));
  EXPECT_EQ(spans[1]["ts"], 3.0);
  EXPECT_EQ(spans[1]["dur"], 3.0);
  EXPECT_EQ(spans[1]["args"]["bytes_read"], 192);
}

TEST(TraceWriter, OneThreadPerModuleOneProcessPerParent) {
  TraceWriter trace;
  const TrackId hbm = trace.track("system.chip0.hbm1");
  const TrackId dma = trace.track("system.chip0.dma0");
  const TrackId other = trace.track("system.chip1.hbm1");
  const TrackId top = trace.track("system");
  EXPECT_EQ(trace.track("system.chip0.hbm1"), hbm);
  EXPECT_EQ(hbm.pid, dma.pid);
  EXPECT_NE(hbm.tid, dma.tid);
  EXPECT_NE(other.pid, hbm.pid);
  EXPECT_NE(other.tid, hbm.tid);
  EXPECT_NE(top.pid, hbm.pid);
}

TEST(TraceWriter, NamesEachProcessAndThreadOnce) {
  TempDir dir;
  const std::string path = (dir / "run.json").string();
  TraceWriter trace;
  // Tracks made before open() (at elaboration) and after it both get their names.
  trace.track("system.chip0.hbm1");
  trace.open(path);
  trace.track("system.chip0.dma0");
  trace.track("system.chip0.hbm1");
  trace.track("system");
  trace.close();

  const json parsed = json::parse(read_text(path));
  EXPECT_THAT(check_chrome_trace(parsed), IsEmpty());
  std::vector<std::string> processes, threads;
  for (const auto& e : events_of(parsed, "M")) {
    (e["name"] == "process_name" ? processes : threads)
        .push_back(e["args"]["name"].get<std::string>());
  }
  EXPECT_THAT(processes, ElementsAre("system.chip0", "system"));
  EXPECT_THAT(threads, ElementsAre("hbm1", "dma0", "system"));
}

TEST(TraceWriter, FileAppearsOnlyWhenClosed) {
  TempDir dir;
  const std::string path = (dir / "run.json").string();
  TraceWriter trace;
  trace.open(path);
  trace.span(trace.track("a.b"), "x", 0, 1);
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(fs::exists(path + ".tmp"));
  trace.close();
  EXPECT_TRUE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(TraceWriter, StreamsToDiskInsteadOfHoldingTheTrace) {
  TempDir dir;
  const std::string path = (dir / "run.json").string();
  TraceWriter trace;
  trace.open(path);
  const TrackId track = trace.track("system.engine");
  for (TimePs t = 0; t < 100'000; ++t) trace.span(track, "job", t * 10, t * 10 + 5);
  // Roughly 8 MB of events: most of it must already be on disk.
  EXPECT_GT(fs::file_size(path + ".tmp"), 4'000'000u);
  trace.close();
  const json parsed = json::parse(read_text(path));
  EXPECT_THAT(check_chrome_trace(parsed), IsEmpty());
  EXPECT_EQ(events_of(parsed, "X").size(), 100'000u);
}

TEST(TraceWriter, DestructorFinishesTheFile) {
  TempDir dir;
  const std::string path = (dir / "run.json").string();
  {
    TraceWriter trace;
    trace.open(path);
    trace.instant(trace.track("top"), "start", 0);
  }
  EXPECT_THAT(check_chrome_trace(json::parse(read_text(path))), IsEmpty());
}

TEST(TraceWriter, OpenFailureNamesTheFile) {
  TempDir dir;
  const std::string path = (dir / "missing" / "run.json").string();
  TraceWriter trace;
  try {
    trace.open(path);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(path));
  }
  EXPECT_FALSE(trace.enabled());
}

TEST(TraceWriter, DisabledWriterIgnoresEvents) {
  TraceWriter trace;
  const TrackId track = trace.track("system.x");
  EXPECT_FALSE(trace.enabled());
  trace.span(track, "x", 5, 1);  // not even checked when off
  trace.counter(track, "c", 0, 1);
  trace.close();
  EXPECT_FALSE(trace.enabled());
}

TEST(TraceWriter, EscapesNames) {
  TempDir dir;
  const std::string path = (dir / "run.json").string();
  const std::string odd = "say \"hi\"\\\n\ttab \xc3\xa9";
  TraceWriter trace;
  trace.open(path);
  trace.span(trace.track("sys.weird\"module"), odd, 0, 1);
  trace.close();
  const json parsed = json::parse(read_text(path));
  EXPECT_THAT(check_chrome_trace(parsed), IsEmpty());
  EXPECT_EQ(events_of(parsed, "X").at(0)["name"], odd);
}

TEST(TraceWriter, RejectsMisuse) {
  TempDir dir;
  TraceWriter trace;
  trace.open((dir / "run.json").string());
  const TrackId track = trace.track("sys.m");
  EXPECT_THROW(trace.open((dir / "other.json").string()), std::logic_error);
  EXPECT_THROW(trace.span(track, "backwards", 10, 5), std::invalid_argument);
  EXPECT_THROW(trace.span(TrackId{}, "untracked", 0, 1), std::invalid_argument);
  EXPECT_THROW(trace.span(track, "args", 0, 1, json::array({1})), std::invalid_argument);
  trace.close();
}

TEST(TraceWriter, SiblingCountersStayApart) {
  TempDir dir;
  const std::string path = (dir / "run.json").string();
  TraceWriter trace;
  trace.open(path);
  trace.counter(trace.track("chip.q0"), "depth", 0, 1);
  trace.counter(trace.track("chip.q1"), "depth", 0, 2);
  trace.close();
  const auto counters = events_of(json::parse(read_text(path)), "C");
  ASSERT_EQ(counters.size(), 2u);
  EXPECT_NE(counters[0]["name"], counters[1]["name"]);
  EXPECT_EQ(counters[0]["pid"], counters[1]["pid"]);
}

// check_chrome_trace: a valid trace, then one breakage per rule, each of which must be caught.

json valid_trace() {
  return json::parse(R"({"traceEvents":[
    {"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"sys"}},
    {"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"a"}},
    {"ph":"X","name":"outer","pid":1,"tid":1,"ts":0.1,"dur":0.2},
    {"ph":"X","name":"inner","pid":1,"tid":1,"ts":0.1,"dur":0.1},
    {"ph":"X","name":"touching","pid":1,"tid":1,"ts":0.30000000000000004,"dur":0.1},
    {"ph":"B","name":"phase","pid":1,"tid":1,"ts":1},
    {"ph":"E","pid":1,"tid":1,"ts":2},
    {"ph":"C","name":"depth","pid":1,"tid":1,"ts":1,"args":{"value":3}},
    {"ph":"i","name":"tick","pid":1,"tid":1,"ts":1,"s":"t"}
  ],"displayTimeUnit":"ns"})");
}

TEST(ChromeTraceCheck, AcceptsAValidTrace) {
  EXPECT_THAT(check_chrome_trace(valid_trace()), IsEmpty());
}

struct Breakage {
  const char* what;
  std::function<void(json&)> apply;
  const char* expected;  // part of the problem text
};

// Names the case in test listings instead of dumping the struct's bytes.
void PrintTo(const Breakage& breakage, std::ostream* os) { *os << breakage.what; }

class ChromeTraceCheckBreakage : public ::testing::TestWithParam<Breakage> {};

TEST_P(ChromeTraceCheckBreakage, IsReported) {
  json trace = valid_trace();
  GetParam().apply(trace);
  const auto problems = check_chrome_trace(trace);
  ASSERT_FALSE(problems.empty()) << GetParam().what;
  EXPECT_THAT(problems, Contains(HasSubstr(GetParam().expected))) << GetParam().what;
}

json& event(json& trace, std::size_t i) { return trace["traceEvents"][i]; }

const Breakage kBreakages[] = {
    {"array form", [](json& t) { t = t["traceEvents"]; }, "not a JSON object"},
    {"no events", [](json& t) { t.erase("traceEvents"); }, "no \"traceEvents\" array"},
    {"events not array", [](json& t) { t["traceEvents"] = json::object(); }, "\"traceEvents\""},
    {"event not object", [](json& t) { t["traceEvents"].push_back(3); }, "not an object"},
    {"bad time unit", [](json& t) { t["displayTimeUnit"] = "us"; }, "displayTimeUnit"},
    {"no ph", [](json& t) { event(t, 2).erase("ph"); }, "no string \"ph\""},
    {"ph not string", [](json& t) { event(t, 2)["ph"] = 88; }, "no string \"ph\""},
    {"unknown ph", [](json& t) { event(t, 2)["ph"] = "Q"; }, "unknown phase"},
    {"pid string", [](json& t) { event(t, 2)["pid"] = "1"; }, "\"pid\" must be an integer"},
    {"pid float", [](json& t) { event(t, 2)["pid"] = 1.5; }, "\"pid\" must be an integer"},
    {"no tid", [](json& t) { event(t, 2).erase("tid"); }, "\"tid\" must be an integer"},
    {"no ts", [](json& t) { event(t, 2).erase("ts"); }, "\"ts\" must be"},
    {"negative ts", [](json& t) { event(t, 7)["ts"] = -1; }, "\"ts\" must be"},
    {"ts string", [](json& t) { event(t, 8)["ts"] = "1"; }, "\"ts\" must be"},
    {"no name", [](json& t) { event(t, 2).erase("name"); }, "no string \"name\""},
    {"no dur", [](json& t) { event(t, 2).erase("dur"); }, "\"dur\" must be"},
    {"negative dur", [](json& t) { event(t, 2)["dur"] = -0.5; }, "\"dur\" must be"},
    {"counter without args", [](json& t) { event(t, 7).erase("args"); }, "non-empty \"args\""},
    {"counter empty args", [](json& t) { event(t, 7)["args"] = json::object(); }, "\"args\""},
    {"counter text value", [](json& t) { event(t, 7)["args"]["value"] = "3"; }, "not a number"},
    {"unknown metadata", [](json& t) { event(t, 0)["name"] = "process_labels"; }, "metadata"},
    {"metadata no name", [](json& t) { event(t, 1)["args"].erase("name"); }, "args.name"},
    {"metadata name number", [](json& t) { event(t, 1)["args"]["name"] = 7; }, "args.name"},
    {"B never ended", [](json& t) { t["traceEvents"].erase(6); }, "never ended"},
    {"E without B", [](json& t) { event(t, 5)["ts"] = 3; }, "E without a matching B"},
    {"unnamed process", [](json& t) { t["traceEvents"].erase(0); }, "no process_name"},
    {"unnamed thread", [](json& t) { event(t, 8)["tid"] = 2; }, "no thread_name"},
    {"overlapping spans", [](json& t) { event(t, 4)["ts"] = 0.25; }, "without nesting"},
    {"bad instant scope", [](json& t) { event(t, 8)["s"] = "x"; }, "instant scope"},
};

std::string breakage_name(const ::testing::TestParamInfo<Breakage>& info) {
  std::string name = info.param.what;
  for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(EachRule, ChromeTraceCheckBreakage, ::testing::ValuesIn(kBreakages),
                         breakage_name);

}  // namespace
}  // namespace podsim::core
