// podsim_specgen: reads a chip programming-interface YAML file and writes the C header, the
// codec's packet tables and the generated sections of docs/chip.md, or checks that the docs
// are current. Exit status: 0 done, 1 docs out of date, 2 bad input.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "core/codegen.h"
#include "hw/chip/spec/specgen/spec_emit.h"
#include "hw/chip/spec/specgen/spec_loader.h"

using podsim::chip::specgen::ChipSpec;
using podsim::core::first_difference;
using podsim::core::write_if_changed;

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
      write_if_changed(
          docs, podsim::chip::specgen::update_docs(podsim::core::read_text_file(docs), spec));
    }
    if (!check_docs.empty()) {
      const std::string current = podsim::core::read_text_file(check_docs);
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
