#include "sims/forked_run.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "sims/command.h"
#include "sims/parallel/mpi_session.h"

namespace podsim::sims {

namespace {

[[noreturn]] void run_child(std::vector<std::string> args, const std::filesystem::path& out,
                            const std::filesystem::path& err) {
  const int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (out_fd < 0 || err_fd < 0) ::_exit(70);
  ::dup2(out_fd, STDOUT_FILENO);
  ::dup2(err_fd, STDERR_FILENO);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int status = 70;
  parallel::MpiSession::leave_launcher();
  try {
    status = run_podsim(static_cast<int>(args.size()), argv.data());
  } catch (...) {
    std::fprintf(stderr, "podsim: error: the run ended with an unexpected exception\n");
  }
  std::fflush(nullptr);
  ::_exit(status);  // not the parent's exit handlers (a Python interpreter's, say)
}

}  // namespace

pid_t start_forked_podsim(const std::vector<std::string>& args, const std::filesystem::path& out,
                          const std::filesystem::path& err) {
  std::vector<std::string> command = {"podsim"};
  command.insert(command.end(), args.begin(), args.end());
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = ::fork();
  if (pid < 0) {
    throw std::runtime_error(std::string("cannot fork a simulation process: ") +
                             std::strerror(errno));
  }
  if (pid == 0) run_child(std::move(command), out, err);
  return pid;
}

ChildExit wait_forked_podsim(pid_t pid, const std::filesystem::path& err) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  ChildExit e;
  e.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (e.status != 0) e.error = last_line(err);
  return e;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string last_line(const std::filesystem::path& path) {
  std::istringstream in(read_file(path));
  std::string line, last = "(nothing on stderr)";
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

ScratchDir::ScratchDir(const std::string& label) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      (std::filesystem::path(base ? base : "/tmp") / ("podsim-" + label + "-XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) {
    throw std::runtime_error("cannot make a temporary folder: " +
                             std::string(std::strerror(errno)));
  }
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace podsim::sims
