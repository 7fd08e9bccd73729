#include "core/codegen.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace podsim::core {
namespace {

struct Span {
  std::size_t content_begin, content_end;
};

std::string begin_prefix(const std::string& name) { return "<!-- BEGIN GENERATED " + name + " ("; }

std::optional<Span> locate(const std::string& doc, const std::string& name) {
  const std::size_t b = doc.find(begin_prefix(name));
  if (b == std::string::npos) return std::nullopt;
  const std::size_t line_end = doc.find(" -->\n", b);
  if (line_end == std::string::npos) return std::nullopt;
  const std::size_t content = line_end + 5;
  const std::size_t e = doc.find(section_end(name), content);
  if (e == std::string::npos) return std::nullopt;
  return Span{content, e};
}

}  // namespace

std::string section_begin(const std::string& name, const std::string& tool) {
  return begin_prefix(name) + tool + ") -->\n";
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
    throw std::invalid_argument("missing markers '" + begin_prefix(name) + "...) -->' / '" +
                                section_end(name) + "'");
  }
  return doc.substr(0, span->content_begin) + content + doc.substr(span->content_end);
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(path + ": cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_if_changed(const std::string& path, const std::string& text) {
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream old;
      old << in.rdbuf();
      if (old.str() == text) return;
    }
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw std::invalid_argument(tmp + ": cannot write the file");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw std::invalid_argument(path + ": cannot replace the file");
  }
}

std::string first_difference(const std::string& in_file, const std::string& generated) {
  std::istringstream sa(in_file), sb(generated);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(sa, la));
    const bool more_b = static_cast<bool>(std::getline(sb, lb));
    if (!more_a && !more_b) return "no difference";
    if (la != lb || more_a != more_b) {
      return "line " + std::to_string(line) + ":\n  in the file: " + (more_a ? la : "<end>") +
             "\n  generated:   " + (more_b ? lb : "<end>");
    }
  }
}

}  // namespace podsim::core
