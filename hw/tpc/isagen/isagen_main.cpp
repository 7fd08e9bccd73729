// podsim_tpc_isagen: reads hw/tpc/isa.yaml and writes the C++ table hw/tpc/isa.h includes and
// the generated sections of docs/tpc/isa.md, or checks that the page is current.
// Exit status: 0 done, 1 docs out of date, 2 bad input.
#include <CLI/CLI.hpp>
#include <iostream>

#include "core/codegen.h"
#include "hw/tpc/isagen/isa_spec.h"

int main(int argc, char** argv) {
  CLI::App app{"podsim_tpc_isagen: generate the TPC ISA table and docs from hw/tpc/isa.yaml"};
  std::string isa_path, isa_name, table, docs, check_docs;
  app.add_option("--isa", isa_path, "the ISA table (hw/tpc/isa.yaml)")->required();
  app.add_option("--isa-name", isa_name, "how generated files name the table (default: --isa)");
  app.add_option("--table", table, "write the C++ table here");
  app.add_option("--docs", docs, "rewrite the generated sections of this markdown page");
  app.add_option("--check-docs", check_docs, "fail when this page's generated sections are stale");
  CLI11_PARSE(app, argc, argv);
  if (isa_name.empty()) isa_name = isa_path;

  namespace gen = podsim::tpc::isagen;
  try {
    const gen::IsaSpec isa = gen::load_isa_file(isa_path);
    if (!table.empty()) podsim::core::write_if_changed(table, gen::emit_cpp_table(isa, isa_name));
    if (!docs.empty()) {
      podsim::core::write_if_changed(docs,
                                     gen::update_docs(podsim::core::read_text_file(docs), isa));
    }
    if (!check_docs.empty()) {
      const std::string current = podsim::core::read_text_file(check_docs);
      const std::string wanted = gen::update_docs(current, isa);
      if (current != wanted) {
        std::cerr << check_docs << ": the generated tables differ from " << isa_name << " at "
                  << podsim::core::first_difference(current, wanted)
                  << "\nRegenerate them with `ninja update_tpc_docs` in the build directory.\n";
        return 1;
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "podsim_tpc_isagen: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
