// Helpers shared by the test suites: temporary directories and running the podsim command.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace podsim::test {

// A fresh directory under the system temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  // Writes text to a file in the directory and returns its path.
  std::filesystem::path write(const std::string& name, const std::string& text) const;

 private:
  std::filesystem::path path_;
};

std::string read_text(const std::filesystem::path& file);

struct RunResult {
  int exit_status = -1;  // the process's exit code, or 128 + signal when killed
  std::string out;
  std::string err;
};

// Runs a program with arguments (no shell), capturing stdout and stderr.
RunResult run_program(const std::string& program, const std::vector<std::string>& args);

}  // namespace podsim::test
