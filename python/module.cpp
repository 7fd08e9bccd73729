// The Python module's native part (`podsim._podsim`): runs one podsim command line in a child
// process forked from this one and returns its exit status, its --json result and what it
// printed. A child because a SystemC kernel elaborates once per process, so every simulation
// needs a fresh one; fork rather than exec, so that the module needs no podsim binary beside it
// and runs exactly the code the command line runs. The Python side (podsim/__init__.py) turns
// keyword arguments into options and results into dicts.
#include <fcntl.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <systemc>
#include <vector>

#include "sims/command.h"

// libsystemc calls sc_main; exported so that it resolves to this module's when Python loads it.
extern "C" __attribute__((visibility("default"))) int sc_main(int argc, char* argv[]) {
  return podsim::sims::run_podsim(argc, argv);
}

namespace {

namespace fs = std::filesystem;
namespace py = pybind11;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The child: output to files, then the command line as `podsim` runs it. Never returns.
[[noreturn]] void run_child(std::vector<std::string> args, const fs::path& dir) {
  const int out = ::open((dir / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const int err = ::open((dir / "err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (out < 0 || err < 0) ::_exit(70);
  ::dup2(out, STDOUT_FILENO);
  ::dup2(err, STDERR_FILENO);
  ::setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int status = 70;
  try {
    status = sc_core::sc_elab_and_sim(static_cast<int>(args.size()), argv.data());
  } catch (...) {
    std::fprintf(stderr, "podsim: error: the simulation ended with an unexpected exception\n");
  }
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(status);  // not Python's exit: its interpreter belongs to the parent
}

// Runs `podsim ARGS... --json FILE`; returns {status, json, stdout, stderr}.
py::dict run(const std::vector<std::string>& args) {
  char pattern[] = "/tmp/podsim-py-XXXXXX";
  const char* made = ::mkdtemp(pattern);
  if (!made) throw std::runtime_error("podsim: cannot make a temporary folder");
  const fs::path dir = made;
  std::vector<std::string> command = {"podsim"};
  command.insert(command.end(), args.begin(), args.end());
  command.insert(command.end(), {"--json", (dir / "result.json").string()});
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("podsim: cannot fork a simulation process");
  if (pid == 0) run_child(command, dir);
  int status = 0;
  {
    py::gil_scoped_release unlocked;  // other Python threads go on while the child runs
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  py::dict result;
  result["status"] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result["json"] = read_text(dir / "result.json");
  result["stdout"] = read_text(dir / "out");
  result["stderr"] = read_text(dir / "err");
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  return result;
}

}  // namespace

PYBIND11_MODULE(_podsim, m) {
  m.doc() = "podsim's native part: one command line per forked simulation process";
  m.def("run", &run, py::arg("args"),
        "Runs `podsim ARGS... --json FILE` in a child process; returns a dict with status, json, "
        "stdout and stderr.");
}
