// The Python module's native part (`podsim._podsim`): runs one podsim command line in a child
// process forked from this one (sims/forked_run.h) and returns its exit status, its --json result
// and what it printed. The Python side (podsim/__init__.py) turns keyword arguments into options
// and results into dicts.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <systemc>
#include <vector>

#include "sims/command.h"
#include "sims/forked_run.h"

// libsystemc refers to sc_main, so it must resolve when Python loads the library; nothing here
// enters it (a child runs the command line directly).
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

// Runs `podsim ARGS... --json FILE`; returns {status, json, stdout, stderr}.
py::dict run(const std::vector<std::string>& args) {
  char pattern[] = "/tmp/podsim-py-XXXXXX";
  const char* made = ::mkdtemp(pattern);
  if (!made) throw std::runtime_error("podsim: cannot make a temporary folder");
  const fs::path dir = made;
  std::vector<std::string> command = args;
  command.insert(command.end(), {"--json", (dir / "result.json").string()});
  const pid_t pid = podsim::sims::start_forked_podsim(command, dir / "out", dir / "err");
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
