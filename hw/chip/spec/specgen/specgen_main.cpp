// podsim_specgen: reads a chip programming-interface YAML file and writes the C header, the
// codec's packet tables and the generated sections of docs/chip.md, or checks that the docs
// are current. Exit status: 0 done, 1 docs out of date, 2 bad input.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <sstream>

#include "hw/chip/spec/specgen/spec_emit.h"
#include "hw/chip/spec/specgen/spec_loader.h"

namespace {

using podsim::chip::specgen::ChipSpec;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(fmt::format("{}: cannot read the file", path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Leaves an unchanged file alone so that its dependents are not rebuilt.
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
    if (!out) throw std::invalid_argument(fmt::format("{}: cannot write the file", tmp));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw std::invalid_argument(fmt::format("{}: cannot replace the file", path));
  }
}

// The first line where two texts part, for a readable report.
std::string first_difference(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(sa, la));
    const bool more_b = static_cast<bool>(std::getline(sb, lb));
    if (!more_a && !more_b) return "no difference";
    if (la != lb || more_a != more_b) {
      return fmt::format("line {}:\n  in the file: {}\n  generated:   {}", line,
                         more_a ? la : "<end>", more_b ? lb : "<end>");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"podsim_specgen: generate the chip programming interface from its YAML spec"};
  std::string spec_path, spec_name, header, tables, docs, check_docs;
  app.add_option("--spec", spec_path, "the YAML spec (e.g. hw/chip/spec/gaudi1.yaml)")->required();
  app.add_option("--spec-name", spec_name, "how generated files name the spec (default: --spec)");
  app.add_option("--header", header, "write the C header here");
  app.add_option("--tables", tables, "write the codec's packet tables here");
  app.add_option("--docs", docs, "rewrite the generated sections of this markdown page");
  app.add_option("--check-docs", check_docs, "fail when this page's generated sections are stale");
  CLI11_PARSE(app, argc, argv);
  if (spec_name.empty()) spec_name = spec_path;

  try {
    const ChipSpec spec = podsim::chip::specgen::load_spec_file(spec_path);
    if (!header.empty()) {
      write_if_changed(header, podsim::chip::specgen::emit_c_header(spec, spec_name));
    }
    if (!tables.empty()) {
      write_if_changed(tables, podsim::chip::specgen::emit_codec_tables(spec, spec_name));
    }
    if (!docs.empty()) {
      write_if_changed(docs, podsim::chip::specgen::update_docs(read_file(docs), spec));
    }
    if (!check_docs.empty()) {
      const std::string current = read_file(check_docs);
      const std::string wanted = podsim::chip::specgen::update_docs(current, spec);
      if (current != wanted) {
        std::cerr << fmt::format(
            "{}: the generated tables differ from {} at {}\nRegenerate them with `ninja "
            "update_chip_docs` in the build directory, or `podsim_specgen --spec {} --docs {}`.\n",
            check_docs, spec_name, first_difference(current, wanted), spec_name, check_docs);
        return 1;
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "podsim_specgen: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
