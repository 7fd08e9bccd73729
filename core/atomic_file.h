// Output files appear whole or not at all: text goes to a temporary file beside the target,
// which is renamed into place only after every byte was written.
#pragma once

#include <string>

namespace podsim::core {

// Throws std::runtime_error naming the file when it cannot be written.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace podsim::core
