// Physical quantities with their units, as written in configuration files and on the command
// line: "100Gbps", "12.5GB/s", "1.5us", "32GiB", "1.65GHz", "2m", "432TFLOPS".
// Captures: parsing with explicit units (a bare number where a unit is needed is an error),
// exact integer storage for time (picoseconds) and sizes (bytes), and canonical printing.
// Ignores: unit arithmetic beyond what models need; quantities are plain value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace podsim::core {

// Simulation time in picoseconds, the kernel's resolution (one byte on 100GbE is 80 ps).
using TimePs = std::uint64_t;

// A span of time, stored exactly in picoseconds.
struct Duration {
  std::int64_t ps = 0;
  double seconds() const { return static_cast<double>(ps) * 1e-12; }
  static Duration from_seconds(double s);
  friend bool operator==(Duration a, Duration b) { return a.ps == b.ps; }
  friend bool operator!=(Duration a, Duration b) { return a.ps != b.ps; }
  friend bool operator<(Duration a, Duration b) { return a.ps < b.ps; }
};

// A number of bytes.
struct ByteSize {
  std::uint64_t bytes = 0;
  friend bool operator==(ByteSize a, ByteSize b) { return a.bytes == b.bytes; }
  friend bool operator!=(ByteSize a, ByteSize b) { return a.bytes != b.bytes; }
  friend bool operator<(ByteSize a, ByteSize b) { return a.bytes < b.bytes; }
};

// A data rate, stored in bits per second so that "100Gbps" is exact.
struct Bandwidth {
  double bits_per_second = 0;
  double bytes_per_second() const { return bits_per_second / 8; }
  // Time to move `bytes` at this rate, rounded up to a whole picosecond.
  Duration time_for(std::uint64_t bytes) const;
  friend bool operator==(Bandwidth a, Bandwidth b) {
    return a.bits_per_second == b.bits_per_second;
  }
  friend bool operator!=(Bandwidth a, Bandwidth b) { return !(a == b); }
};

struct Frequency {
  double hertz = 0;
  Duration period() const { return Duration::from_seconds(1.0 / hertz); }
  friend bool operator==(Frequency a, Frequency b) { return a.hertz == b.hertz; }
};

// A physical length (cables), in meters.
struct Length {
  double meters = 0;
  friend bool operator==(Length a, Length b) { return a.meters == b.meters; }
};

// A location in an address space (a chip's map, host memory), written in hex: "0x7ff0000000".
struct Address {
  std::uint64_t value = 0;
  friend bool operator==(Address a, Address b) { return a.value == b.value; }
  friend bool operator!=(Address a, Address b) { return a.value != b.value; }
};

// Arithmetic throughput, in floating-point operations per second.
struct ComputeRate {
  double flops = 0;
  friend bool operator==(ComputeRate a, ComputeRate b) { return a.flops == b.flops; }
};

// Parsers return nullopt and fill `error` with a human-readable reason (which names the accepted
// units) when the text is not a quantity of the requested kind.
std::optional<Duration> parse_duration(std::string_view text, std::string* error = nullptr);
std::optional<ByteSize> parse_byte_size(std::string_view text, std::string* error = nullptr);
std::optional<Bandwidth> parse_bandwidth(std::string_view text, std::string* error = nullptr);
std::optional<Frequency> parse_frequency(std::string_view text, std::string* error = nullptr);
std::optional<Length> parse_length(std::string_view text, std::string* error = nullptr);
std::optional<ComputeRate> parse_compute_rate(std::string_view text, std::string* error = nullptr);
// "0x" and hex digits, or decimal digits.
std::optional<Address> parse_address(std::string_view text, std::string* error = nullptr);

// Canonical text that parses back to the same value ("1.5us", "32GiB", "100Gbps", "12.5GB/s").
std::string to_string(Duration d);
std::string to_string(ByteSize s);
std::string to_string(Bandwidth b);
std::string to_string(Frequency f);
std::string to_string(Length l);
std::string to_string(ComputeRate r);
std::string to_string(Address a);  // "0x" and lower-case hex digits

// Human-facing forms used in tables: bandwidth in GB/s (decimal) and sizes with binary prefixes.
std::string format_gbytes_per_second(Bandwidth b);

namespace literals {
constexpr ByteSize operator""_B(unsigned long long n) { return ByteSize{n}; }
constexpr ByteSize operator""_KiB(unsigned long long n) { return ByteSize{n << 10}; }
constexpr ByteSize operator""_MiB(unsigned long long n) { return ByteSize{n << 20}; }
constexpr ByteSize operator""_GiB(unsigned long long n) { return ByteSize{n << 30}; }
constexpr Duration operator""_ps(unsigned long long n) {
  return Duration{static_cast<std::int64_t>(n)};
}
constexpr Duration operator""_ns(unsigned long long n) {
  return Duration{static_cast<std::int64_t>(n) * 1000};
}
constexpr Duration operator""_us(unsigned long long n) {
  return Duration{static_cast<std::int64_t>(n) * 1000000};
}
constexpr Bandwidth operator""_Gbps(unsigned long long n) {
  return Bandwidth{static_cast<double>(n) * 1e9};
}
}  // namespace literals

}  // namespace podsim::core
