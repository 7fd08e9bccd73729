#include "core/units.h"

#include <gtest/gtest.h>

#include <cmath>

namespace podsim::core {
namespace {

TEST(Units, ParsesDurations) {
  EXPECT_EQ(parse_duration("1.5us")->ps, 1500000);
  EXPECT_EQ(parse_duration("80ps")->ps, 80);
  EXPECT_EQ(parse_duration("4.096us")->ps, 4096000);
  EXPECT_EQ(parse_duration("2 ms")->ps, 2000000000);
  EXPECT_EQ(parse_duration("1s")->ps, 1000000000000);
  EXPECT_EQ(parse_duration(" 300ns ")->ps, 300000);
}

TEST(Units, ParsesSizesInBinaryAndDecimalUnits) {
  EXPECT_EQ(parse_byte_size("32GiB")->bytes, 32ull << 30);
  EXPECT_EQ(parse_byte_size("4KiB")->bytes, 4096u);
  EXPECT_EQ(parse_byte_size("96GB")->bytes, 96000000000ull);
  EXPECT_EQ(parse_byte_size("1.5KiB")->bytes, 1536u);
  EXPECT_EQ(parse_byte_size("7B")->bytes, 7u);
}

TEST(Units, ParsesBandwidthInBitsAndBytes) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("100Gbps")->bits_per_second, 100e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("100Gb/s")->bits_per_second, 100e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("12.5GB/s")->bits_per_second, 100e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("2.45TB/s")->bytes_per_second(), 2.45e12);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1GiB/s")->bytes_per_second(), 1073741824.0);
}

TEST(Units, ParsesFrequencyLengthAndComputeRate) {
  EXPECT_DOUBLE_EQ(parse_frequency("1.65GHz")->hertz, 1.65e9);
  EXPECT_DOUBLE_EQ(parse_length("2m")->meters, 2.0);
  EXPECT_DOUBLE_EQ(parse_length("50cm")->meters, 0.5);
  EXPECT_DOUBLE_EQ(parse_compute_rate("432TFLOPS")->flops, 432e12);
}

TEST(Units, BareNumberIsAnErrorThatNamesExampleUnits) {
  std::string error;
  EXPECT_FALSE(parse_bandwidth("100", &error));
  EXPECT_NE(error.find("has no unit"), std::string::npos) << error;
  EXPECT_NE(error.find("Gbps"), std::string::npos) << error;
}

TEST(Units, UnknownUnitListsTheAcceptedOnes) {
  std::string error;
  EXPECT_FALSE(parse_bandwidth("100Gbs", &error));
  EXPECT_NE(error.find("unknown unit 'Gbs'"), std::string::npos) << error;
  EXPECT_NE(error.find("GB/s"), std::string::npos) << error;
  EXPECT_FALSE(parse_duration("5 parsecs", &error));
  EXPECT_NE(error.find("'parsecs'"), std::string::npos) << error;
}

TEST(Units, RejectsWhatIsNotANumber) {
  std::string error;
  EXPECT_FALSE(parse_byte_size("lots", &error));
  EXPECT_NE(error.find("not a size"), std::string::npos) << error;
  EXPECT_FALSE(parse_duration("inf s", &error));
  EXPECT_FALSE(parse_duration("", &error));
}

TEST(Units, SizesMustBeWholeAndNonNegative) {
  std::string error;
  EXPECT_FALSE(parse_byte_size("0.3B", &error));
  EXPECT_NE(error.find("whole number"), std::string::npos) << error;
  EXPECT_FALSE(parse_byte_size("-4KiB", &error));
  EXPECT_NE(error.find("negative"), std::string::npos) << error;
}

TEST(Units, NegativeBandwidthParsesSoRangeChecksCanNameTheKey) {
  // The parser reads the sign; "must be greater than zero" is the config binder's message.
  EXPECT_DOUBLE_EQ(parse_bandwidth("-5Gbps")->bits_per_second, -5e9);
}

TEST(Units, CanonicalTextRoundTrips) {
  for (const char* text : {"1.5us", "80ps", "4.096us", "2ms", "1s", "300ns"}) {
    EXPECT_EQ(to_string(*parse_duration(text)), text);
  }
  for (const char* text : {"32GiB", "4KiB", "96GB", "48MB", "1536B"}) {
    EXPECT_EQ(to_string(*parse_byte_size(text)), text);
  }
  EXPECT_EQ(to_string(*parse_bandwidth("100Gbps")), "100Gbps");
  EXPECT_EQ(to_string(*parse_bandwidth("12.5GB/s")), "100Gbps");
  EXPECT_EQ(to_string(*parse_frequency("1.65GHz")), "1.65GHz");
  EXPECT_EQ(to_string(*parse_compute_rate("432TFLOPS")), "432TFLOPS");
  EXPECT_EQ(to_string(Duration{0}), "0ns");
}

TEST(Units, TimeForBytesRoundsUpToWholePicoseconds) {
  const Bandwidth line{100e9};
  EXPECT_EQ(line.time_for(1).ps, 80);              // one byte on 100GbE
  EXPECT_EQ(line.time_for(4178).ps, 334240);       // a full 4 KiB RoCE frame
  EXPECT_EQ(Bandwidth{3e9}.time_for(1).ps, 2667);  // 2666.67 ps rounds up
  // Whole-number rates take integer arithmetic, others long double: the two agree.
  for (std::uint64_t bytes : {1ull, 7ull, 4178ull, 1ull << 20, 1ull << 30, 123456789ull}) {
    for (double rate : {100e9, 3.3792e12, 19.6e12, 1e6, 2.45e12 * 8}) {
      const long double exact = static_cast<long double>(bytes) * 8e12L / rate;
      EXPECT_EQ(Bandwidth{rate}.time_for(bytes).ps,
                static_cast<std::int64_t>(std::ceil(exact - 1e-6L)))
          << bytes << " bytes at " << rate;
    }
    EXPECT_EQ(Bandwidth{2.5e9 + 0.5}.time_for(bytes).ps,
              static_cast<std::int64_t>(
                  std::ceil(static_cast<long double>(bytes) * 8e12L / (2.5e9 + 0.5) - 1e-6L)));
  }
}

TEST(Units, LiteralsMatchParsedValues) {
  using namespace literals;
  EXPECT_EQ(4_KiB, *parse_byte_size("4KiB"));
  EXPECT_EQ(3_us, *parse_duration("3us"));
  EXPECT_EQ(100_Gbps, *parse_bandwidth("100Gbps"));
}

}  // namespace
}  // namespace podsim::core
