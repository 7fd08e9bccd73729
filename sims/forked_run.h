// Running a podsim command line in a child process forked from this one: what `podsim sweep`
// does for each point and the Python module for each call. A SystemC kernel elaborates once per
// process, so each simulation needs a fresh one; fork rather than exec, so that no podsim
// binary need be found and the child runs exactly this program's code.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace podsim::sims {

// Starts `podsim ARGS...` (args without the program name) in a forked child whose stdout and
// stderr go to the two files; returns its pid for waitpid. The parent must not have elaborated a
// SystemC model. Throws std::runtime_error when the fork fails.
pid_t start_forked_podsim(const std::vector<std::string>& args, const std::filesystem::path& out,
                          const std::filesystem::path& err);

// A child's exit: its status (128 + the signal when killed) and its stderr's last line.
struct ChildExit {
  int status = 0;
  std::string error;
};
// Waits for child `pid`, whose stderr went to `err`.
ChildExit wait_forked_podsim(pid_t pid, const std::filesystem::path& err);

// A file's text (empty when it cannot be read).
std::string read_file(const std::filesystem::path& path);
// The last non-empty line of a file, or "(nothing on stderr)".
std::string last_line(const std::filesystem::path& path);

// A temporary folder for children's files ("podsim-LABEL-XXXXXX" under $TMPDIR or /tmp),
// removed with everything in it when it goes. Throws std::runtime_error when it cannot be made.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& label);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace podsim::sims
