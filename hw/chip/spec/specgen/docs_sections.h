// Generated sections inside a hand-written markdown page. A section sits between
//   <!-- BEGIN GENERATED <name> (podsim_specgen) -->  and  <!-- END GENERATED <name> -->
// so the lead's prose around it survives regeneration.
#pragma once

#include <optional>
#include <string>

namespace podsim::chip::specgen {

std::string section_begin(const std::string& name);
std::string section_end(const std::string& name);

// The text between the markers of `name`, or nullopt when they are missing or out of order.
std::optional<std::string> find_section(const std::string& doc, const std::string& name);
// `doc` with the section's content replaced; throws std::invalid_argument without markers.
std::string replace_section(const std::string& doc, const std::string& name,
                            const std::string& content);

}  // namespace podsim::chip::specgen
