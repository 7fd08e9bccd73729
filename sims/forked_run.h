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

}  // namespace podsim::sims
