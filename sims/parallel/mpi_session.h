// The MPI side of a parallel run: started when mpirun launched the process (OpenMPI's or MPICH's
// environment says so), with the few collective operations a run needs, through Boost.MPI and,
// where it has no such call (all-to-all of byte buffers of any size), MPI itself.
// Captures: rank and size, reductions of times and counts, byte buffers exchanged all-to-all or
// gathered at rank 0, and aborting every process when one fails. Ignores: more than one
// communicator, and threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace podsim::parallel {

class MpiSession {
 public:
  // Whether mpirun (or mpiexec) started this process.
  static bool launched_by_mpirun();
  // How many processes of this mpirun share this machine (1 without mpirun).
  static int processes_on_this_machine();
  // In a child forked to run a simulation of its own: forget the launcher, so that the child
  // neither joins nor disturbs its parent's MPI run.
  static void leave_launcher();

  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  std::uint64_t min(std::uint64_t value) const;
  // Element by element over every process, the result everywhere.
  void sum(std::vector<std::uint64_t>& values) const;
  void max(std::vector<std::uint64_t>& values) const;
  // outgoing[r] goes to process r; returns what each process sent here, by sender.
  std::vector<std::vector<char>> exchange(const std::vector<std::vector<char>>& outgoing) const;
  // At rank 0, every process's `mine` by rank (its own included); elsewhere empty.
  std::vector<std::string> gather(const std::string& mine) const;
  // Ends every process of the run with `status`.
  [[noreturn]] void abort(int status) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
  int rank_ = 0, size_ = 1;
};

}  // namespace podsim::parallel
