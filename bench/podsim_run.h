// What the benchmarks share: running the podsim binary as a child process with --json, and
// reading back its results, wall time and peak memory (from the child's rusage).
#pragma once

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace podsim::bench {

// Reads "--flag VALUE" pairs into `flags`. On an unknown flag, or a flag without its value,
// prints `usage` and returns false.
inline bool read_flags(int argc, char** argv, const std::map<std::string, std::string*>& flags,
                       const char* usage) {
  for (int i = 1; i < argc; i += 2) {
    const auto it = flags.find(argv[i]);
    if (it == flags.end() || i + 1 >= argc) {
      std::fprintf(stderr, "%s\n", usage);
      return false;
    }
    *it->second = argv[i + 1];
  }
  return true;
}

struct PodsimRun {
  nlohmann::json result;
  double wall_seconds = 0;
  double cpu_seconds = 0;  // the child's user and system time
  double max_rss_gib = 0;
};

// Runs `podsim args... --json TMP -q` with stdout discarded; throws std::runtime_error when it
// cannot start or exits with a non-zero status.
inline PodsimRun run_podsim(const std::string& podsim, std::vector<std::string> args) {
  const std::string json_file = fmt::format("/tmp/podsim-bench-{}.json", ::getpid());
  args.insert(args.end(), {"--json", json_file, "-q"});
  std::vector<char*> argv{const_cast<char*>(podsim.c_str())};
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, podsim.c_str(), &actions, nullptr, argv.data(), environ) != 0) {
    throw std::runtime_error("cannot start " + podsim);
  }
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  rusage usage{};
  ::wait4(pid, &status, 0, &usage);
  PodsimRun run;
  run.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("podsim failed: " + fmt::format("{}", fmt::join(args, " ")));
  }
  std::ifstream in(json_file);
  run.result = nlohmann::json::parse(in);
  std::remove(json_file.c_str());
  run.max_rss_gib = static_cast<double>(usage.ru_maxrss) / (1024.0 * 1024.0);
  const auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; };
  run.cpu_seconds = seconds(usage.ru_utime) + seconds(usage.ru_stime);
  return run;
}

}  // namespace podsim::bench
