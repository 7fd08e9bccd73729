#include "sims/parallel/mpi_session.h"

#include <mpi.h>

#include <algorithm>
#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace podsim::parallel {

struct MpiSession::State {
  State(int& argc, char**& argv) : environment(argc, argv, /*abort_on_exception=*/true) {}
  boost::mpi::environment environment;
  boost::mpi::communicator world;
};

namespace {
constexpr const char* kLauncherVariables[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"};
}

bool MpiSession::launched_by_mpirun() {
  for (const char* variable : kLauncherVariables) {
    if (std::getenv(variable)) return true;
  }
  return false;
}

int MpiSession::processes_on_this_machine() {
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (!local) local = std::getenv("MPI_LOCALNRANKS");  // MPICH's
  return local ? std::max(1, std::atoi(local)) : 1;
}

void MpiSession::leave_launcher() {
  for (const char* variable : kLauncherVariables) ::unsetenv(variable);
}

MpiSession::MpiSession(int& argc, char**& argv) : state_(std::make_unique<State>(argc, argv)) {
  rank_ = state_->world.rank();
  size_ = state_->world.size();
}

MpiSession::~MpiSession() = default;

std::uint64_t MpiSession::min(std::uint64_t value) const {
  std::uint64_t result = 0;
  MPI_Allreduce(&value, &result, 1, MPI_UINT64_T, MPI_MIN, state_->world);
  return result;
}

void MpiSession::sum(std::vector<std::uint64_t>& values) const {
  MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_UINT64_T, MPI_SUM,
                state_->world);
}

void MpiSession::max(std::vector<std::uint64_t>& values) const {
  MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_UINT64_T, MPI_MAX,
                state_->world);
}

std::vector<std::vector<char>> MpiSession::exchange(
    const std::vector<std::vector<char>>& outgoing) const {
  const auto n = static_cast<std::size_t>(size_);
  std::vector<int> send_counts(n), recv_counts(n), send_at(n), recv_at(n);
  std::vector<char> send;
  for (std::size_t r = 0; r < n; ++r) {
    if (outgoing[r].size() > static_cast<std::size_t>(std::numeric_limits<int>::max() / 2)) {
      throw std::length_error("frames for one process exceed what one MPI message carries");
    }
    send_at[r] = static_cast<int>(send.size());
    send_counts[r] = static_cast<int>(outgoing[r].size());
    send.insert(send.end(), outgoing[r].begin(), outgoing[r].end());
  }
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, state_->world);
  std::exclusive_scan(recv_counts.begin(), recv_counts.end(), recv_at.begin(), 0);
  std::vector<char> received(static_cast<std::size_t>(recv_at.back() + recv_counts.back()));
  MPI_Alltoallv(send.data(), send_counts.data(), send_at.data(), MPI_CHAR, received.data(),
                recv_counts.data(), recv_at.data(), MPI_CHAR, state_->world);
  std::vector<std::vector<char>> incoming(n);
  for (std::size_t r = 0; r < n; ++r) {
    const auto* from = received.data() + recv_at[r];
    incoming[r].assign(from, from + recv_counts[r]);
  }
  return incoming;
}

std::vector<std::string> MpiSession::gather(const std::string& mine) const {
  std::vector<std::string> all;
  boost::mpi::gather(state_->world, mine, all, 0);
  return all;
}

void MpiSession::abort(int status) const {
  state_->environment.abort(status);
  std::_Exit(status);  // MPI_Abort does not return; should it, end this process at least
}

}  // namespace podsim::parallel
