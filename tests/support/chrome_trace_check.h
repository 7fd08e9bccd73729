// A structural check of Chrome JSON traces, so tests can assert that what podsim writes will load
// in Perfetto and chrome://tracing.
// Captures: the object form with "traceEvents", event phases and their required fields, named
// processes and threads, balanced B/E pairs and properly nested X spans per thread. Ignores:
// flow and async event pairing, and anything about what the events mean.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace podsim::test {

// Every structural problem found, each naming the event by index; empty means loadable.
std::vector<std::string> check_chrome_trace(const nlohmann::json& trace);

}  // namespace podsim::test
