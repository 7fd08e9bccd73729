#include "hw/chip/spec/specgen/docs_sections.h"

#include <stdexcept>

namespace podsim::chip::specgen {
namespace {

struct Span {
  std::size_t content_begin, content_end;
};

std::optional<Span> locate(const std::string& doc, const std::string& name) {
  const std::string begin = section_begin(name);
  const std::string end = section_end(name);
  const std::size_t b = doc.find(begin);
  if (b == std::string::npos) return std::nullopt;
  const std::size_t content = b + begin.size();
  const std::size_t e = doc.find(end, content);
  if (e == std::string::npos) return std::nullopt;
  return Span{content, e};
}

}  // namespace

std::string section_begin(const std::string& name) {
  return "<!-- BEGIN GENERATED " + name + " (podsim_specgen) -->\n";
}
std::string section_end(const std::string& name) { return "<!-- END GENERATED " + name + " -->"; }

std::optional<std::string> find_section(const std::string& doc, const std::string& name) {
  const auto span = locate(doc, name);
  if (!span) return std::nullopt;
  return doc.substr(span->content_begin, span->content_end - span->content_begin);
}

std::string replace_section(const std::string& doc, const std::string& name,
                            const std::string& content) {
  const auto span = locate(doc, name);
  if (!span) {
    throw std::invalid_argument("missing markers '" + section_begin(name).substr(0, 40) +
                                "...' / '" + section_end(name) + "'");
  }
  return doc.substr(0, span->content_begin) + content + doc.substr(span->content_end);
}

}  // namespace podsim::chip::specgen
