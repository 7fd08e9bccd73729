#include "core/units.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace podsim::core {
namespace {

struct UnitScale {
  std::string_view name;
  double scale;  // multiplier to the stored base unit
};

// Units in the order they are listed in error messages.
constexpr UnitScale kDurationUnits[] = {
    {"ps", 1}, {"ns", 1e3}, {"us", 1e6}, {"ms", 1e9}, {"s", 1e12}};
constexpr UnitScale kByteUnits[] = {
    {"B", 1},           {"KB", 1e3},           {"MB", 1e6},
    {"GB", 1e9},        {"TB", 1e12},          {"KiB", 1024.0},
    {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
constexpr UnitScale kBandwidthUnits[] = {
    {"bps", 1},           {"Kbps", 1e3},          {"Mbps", 1e6}, {"Gbps", 1e9},  {"Tbps", 1e12},
    {"Kb/s", 1e3},        {"Mb/s", 1e6},          {"Gb/s", 1e9}, {"Tb/s", 1e12}, {"B/s", 8},
    {"KB/s", 8e3},        {"MB/s", 8e6},          {"GB/s", 8e9}, {"TB/s", 8e12}, {"KiB/s", 8192.0},
    {"MiB/s", 8388608.0}, {"GiB/s", 8589934592.0}};
constexpr UnitScale kFrequencyUnits[] = {
    {"Hz", 1}, {"kHz", 1e3}, {"KHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9}};
constexpr UnitScale kLengthUnits[] = {{"mm", 1e-3}, {"cm", 1e-2}, {"m", 1}, {"km", 1e3}};
constexpr UnitScale kComputeUnits[] = {
    {"FLOPS", 1}, {"GFLOPS", 1e9}, {"TFLOPS", 1e12}, {"PFLOPS", 1e15}};

template <std::size_t N>
std::string unit_list(const UnitScale (&units)[N]) {
  std::string list;
  for (const auto& u : units) {
    if (!list.empty()) list += ", ";
    list += u.name;
  }
  return list;
}

void set_error(std::string* error, std::string message) {
  if (error) *error = std::move(message);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits "12.5 GB/s" into 12.5 and "GB/s"; returns the value in base units.
template <std::size_t N>
std::optional<double> parse_quantity(std::string_view text, const UnitScale (&units)[N],
                                     std::string_view kind, std::string_view example,
                                     std::string* error) {
  const std::string s(trim(text));
  const char* begin = s.c_str();
  char* end = nullptr;
  const double number = std::strtod(begin, &end);
  if (end == begin || s.empty() || std::isalpha(static_cast<unsigned char>(s[0]))) {
    set_error(error, fmt::format("'{}' is not a {}; expected a number with a unit, such as {}", s,
                                 kind, example));
    return std::nullopt;
  }
  if (!std::isfinite(number)) {
    set_error(error, fmt::format("'{}' is not a finite {}", s, kind));
    return std::nullopt;
  }
  const std::string_view unit = trim(std::string_view(end));
  if (unit.empty()) {
    set_error(error, fmt::format("'{}' has no unit; a {} needs one, such as {} (units: {})", s,
                                 kind, example, unit_list(units)));
    return std::nullopt;
  }
  for (const auto& u : units) {
    if (u.name == unit) return number * u.scale;
  }
  set_error(error, fmt::format("'{}' has an unknown unit '{}' for a {}; use one of: {}", s, unit,
                               kind, unit_list(units)));
  return std::nullopt;
}

// The shortest decimal text that reads back as the same double.
std::string shortest(double v) { return fmt::format("{}", v); }

// Prints a value with the largest unit in which it is at least 1.
template <std::size_t N>
std::string with_largest_unit(double base, const UnitScale (&units)[N], std::size_t first,
                              std::size_t last) {
  std::size_t pick = first;
  for (std::size_t i = first; i <= last; ++i) {
    if (std::fabs(base) >= units[i].scale) pick = i;
  }
  return shortest(base / units[pick].scale) + std::string(units[pick].name);
}

}  // namespace

Duration Duration::from_seconds(double s) { return Duration{std::llround(s * 1e12)}; }

Duration Bandwidth::time_for(std::uint64_t bytes) const {
  // Rounded up, ignoring excesses below a millionth of a picosecond. Whole-number rates (every
  // rate a preset gives) take exact 128-bit integer arithmetic, several times faster than long
  // double on the per-packet path; the result is the same.
  const double bps = bits_per_second;
  if (bps >= 1 && bps < 1.8e19 && std::floor(bps) == bps) {
    using U = unsigned __int128;
    const U rate = static_cast<U>(bps);
    const U bits_ps = static_cast<U>(bytes) * 8 * 1000000000000ull;
    const U whole = bits_ps / rate, rest = bits_ps % rate;
    return Duration{static_cast<std::int64_t>(whole + (rest * 1000000 > rate ? 1 : 0))};
  }
  const long double ps = static_cast<long double>(bytes) * 8.0L * 1e12L / bps;
  return Duration{static_cast<std::int64_t>(std::ceil(ps - 1e-6L))};
}

std::optional<Duration> parse_duration(std::string_view text, std::string* error) {
  const auto ps = parse_quantity(text, kDurationUnits, "duration", "1.5us", error);
  if (!ps) return std::nullopt;
  if (std::fabs(*ps) > 9e18) {
    set_error(error, fmt::format("'{}' is too long a duration", trim(text)));
    return std::nullopt;
  }
  return Duration{std::llround(*ps)};
}

std::optional<ByteSize> parse_byte_size(std::string_view text, std::string* error) {
  const auto bytes = parse_quantity(text, kByteUnits, "size", "32GiB or 4KiB", error);
  if (!bytes) return std::nullopt;
  if (*bytes < 0) {
    set_error(error, fmt::format("'{}' is a negative size", trim(text)));
    return std::nullopt;
  }
  const double whole = std::round(*bytes);
  if (std::fabs(*bytes - whole) > 1e-6 * std::max(1.0, whole) || whole > 1.8e19) {
    set_error(error, fmt::format("'{}' is not a whole number of bytes", trim(text)));
    return std::nullopt;
  }
  return ByteSize{static_cast<std::uint64_t>(whole)};
}

std::optional<Bandwidth> parse_bandwidth(std::string_view text, std::string* error) {
  const auto bps = parse_quantity(text, kBandwidthUnits, "bandwidth", "100Gbps or 12.5GB/s", error);
  if (!bps) return std::nullopt;
  return Bandwidth{*bps};
}

std::optional<Frequency> parse_frequency(std::string_view text, std::string* error) {
  const auto hz = parse_quantity(text, kFrequencyUnits, "frequency", "1.65GHz", error);
  if (!hz) return std::nullopt;
  return Frequency{*hz};
}

std::optional<Length> parse_length(std::string_view text, std::string* error) {
  const auto m = parse_quantity(text, kLengthUnits, "length", "2m or 50cm", error);
  if (!m) return std::nullopt;
  return Length{*m};
}

std::optional<ComputeRate> parse_compute_rate(std::string_view text, std::string* error) {
  const auto f = parse_quantity(text, kComputeUnits, "compute rate", "432TFLOPS", error);
  if (!f) return std::nullopt;
  return ComputeRate{*f};
}

std::string to_string(Duration d) {
  if (d.ps == 0) return "0ns";
  return with_largest_unit(static_cast<double>(d.ps), kDurationUnits, 0, 4);
}

std::string to_string(ByteSize s) {
  // The largest unit, binary or decimal, that divides the size exactly: 4KiB, 48MB, 96GB.
  constexpr std::pair<std::uint64_t, std::string_view> kExact[] = {
      {1ull << 40, "TiB"}, {1000000000000ull, "TB"}, {1ull << 30, "GiB"}, {1000000000ull, "GB"},
      {1ull << 20, "MiB"}, {1000000ull, "MB"},       {1ull << 10, "KiB"}, {1000ull, "KB"}};
  for (const auto& [scale, name] : kExact) {
    if (s.bytes != 0 && s.bytes % scale == 0) return fmt::format("{}{}", s.bytes / scale, name);
  }
  return fmt::format("{}B", s.bytes);
}

std::string to_string(Bandwidth b) {
  return with_largest_unit(b.bits_per_second, kBandwidthUnits, 0, 4);
}

std::string to_string(Frequency f) {
  constexpr UnitScale kPrint[] = {{"Hz", 1}, {"kHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9}};
  return with_largest_unit(f.hertz, kPrint, 0, 3);
}

std::string to_string(Length l) {
  return l.meters >= 1 || l.meters == 0 ? shortest(l.meters) + "m"
                                        : shortest(l.meters * 100) + "cm";
}

std::string to_string(ComputeRate r) { return with_largest_unit(r.flops, kComputeUnits, 0, 3); }

std::string format_gbytes_per_second(Bandwidth b) {
  return fmt::format("{:.2f} GB/s", b.bytes_per_second() / 1e9);
}

std::optional<Address> parse_address(std::string_view text, std::string* error) {
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const std::string_view digits = hex ? text.substr(2) : text;
  std::uint64_t value = 0;
  const char* end = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(digits.data(), end, value, hex ? 16 : 10);
  if (ec == std::errc() && ptr == end && !digits.empty()) return Address{value};
  if (error) {
    *error =
        fmt::format("'{}' is not an address (hex like 0x7ff0000000, or decimal, below 2^64)", text);
  }
  return std::nullopt;
}

std::string to_string(Address a) { return fmt::format("{:#x}", a.value); }

}  // namespace podsim::core
