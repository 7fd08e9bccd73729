// What the build's generators (podsim_specgen, podsim_tpc_isagen, podsim_tpc_as) share: reading
// and writing their files, and generated sections inside a hand-written markdown page. A section
// sits between
//   <!-- BEGIN GENERATED <name> (<tool>) -->  and  <!-- END GENERATED <name> -->
// so the prose around it survives regeneration. Plain C++, no SystemC.
#pragma once

#include <optional>
#include <string>

namespace podsim::core {

std::string section_begin(const std::string& name, const std::string& tool);
std::string section_end(const std::string& name);

// The text between the markers of `name` (whichever tool wrote them), or nullopt when they are
// missing or out of order.
std::optional<std::string> find_section(const std::string& doc, const std::string& name);
// `doc` with the section's content replaced; throws std::invalid_argument without markers.
std::string replace_section(const std::string& doc, const std::string& name,
                            const std::string& content);

// The whole file; throws std::invalid_argument naming the path when it cannot be read.
std::string read_text_file(const std::string& path);
// Writes through a temporary file and leaves an unchanged file alone, so that what depends on it
// is not rebuilt; throws std::invalid_argument naming the path on failure.
void write_if_changed(const std::string& path, const std::string& text);
// The first line where two texts part, quoted from both, for a readable report.
std::string first_difference(const std::string& in_file, const std::string& generated);

}  // namespace podsim::core
