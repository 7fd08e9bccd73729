// podsim_tpc_as: the TPC assembler as a command.
//   podsim_tpc_as kernel.tpcs -D T=bf16 -o kernel.bin     assemble one source
//   podsim_tpc_as --disassemble kernel.bin                 print a binary as text
//   podsim_tpc_as --manifest kernels.yaml --out kernels.inc
//                                                          the build's kernel library: every
//                                                          variant of every kernel, as C++ data
// Exit status: 0 done, 2 bad input (the message names file, line and column).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <iostream>

#include "core/codegen.h"
#include "core/yaml_reader.h"
#include "hw/tpc/assembler.h"

namespace {

using podsim::core::YamlMap;
namespace tpc = podsim::tpc;

std::map<std::string, std::string> type_defines(const std::string& prefix, const std::string& type,
                                                const YamlMap& at) {
  const auto t = tpc::find_dtype(type);
  if (!t) at.fail(fmt::format("'{}' is not a type", type));
  const int lanes = tpc::lanes(*t);
  return {{prefix, type},
          {prefix + "LANES", std::to_string(lanes)},
          {prefix + "LANES_X2", std::to_string(2 * lanes)},
          {prefix + "LANES_X3", std::to_string(3 * lanes)},
          {prefix + "LANES_X4", std::to_string(4 * lanes)}};
}

std::string camel(const std::string& s) {
  std::string out;
  bool up = true;
  for (char c : s) {
    if (c == '_') {
      up = true;
      continue;
    }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out;
}

std::string byte_array(const std::vector<std::uint8_t>& bytes) {
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    out += fmt::format("{}0x{:02X},", i % 16 == 0 ? "\n    " : "", bytes[i]);
  }
  return out;
}

// One variant: the source assembled with its definitions, as a C++ array and a table entry.
struct Variant {
  std::string key, symbol, source;
  std::map<std::string, std::string> defines;
};

std::vector<Variant> read_manifest(const std::string& path) {
  const std::string text = podsim::core::read_text_file(path);
  YamlMap root(podsim::core::parse_yaml(text, path), "", path);
  std::vector<Variant> out;
  for (const auto& [node, where] : root.items("kernels")) {
    YamlMap r(node, where, path);
    const std::string name = r.identifier("name");
    const std::string source = r.text("source");
    std::map<std::string, std::string> extra;
    if (r.has("defines")) {
      YamlMap d(r.get("defines"), r.child_path("defines"), path);
      for (const auto& entry : node["defines"])
        extra[entry.first.Scalar()] = d.text(entry.first.Scalar());
      d.finish();
    }
    const std::vector<std::string> types = r.words_or("types", {});
    const std::vector<std::string> pairs = r.words_or("casts", {});
    r.finish();
    const auto add = [&](std::string key, std::map<std::string, std::string> defines) {
      defines.insert(extra.begin(), extra.end());
      std::string symbol = "k_" + key;
      for (char& c : symbol) c = c == '.' ? '_' : c;
      out.push_back(Variant{key, symbol, source, defines});
    };
    for (const std::string& t : types) add(name + "." + t, type_defines("T", t, r));
    for (const std::string& pair : pairs) {  // "from>to"
      const std::size_t arrow = pair.find('>');
      if (arrow == std::string::npos)
        r.fail(fmt::format("cast '{}' must be written from>to", pair));
      const std::string from = pair.substr(0, arrow), to = pair.substr(arrow + 1);
      auto defines = type_defines("T", to, r);
      auto source_defines = type_defines("S", from, r);
      defines.insert(source_defines.begin(), source_defines.end());
      add(name + "." + from + "." + to, defines);
    }
    if (types.empty() && pairs.empty()) r.fail("a kernel needs 'types' or 'casts'");
  }
  return out;
}

int build_library(const std::string& manifest, const std::string& source_dir,
                  const std::string& out) {
  std::string data, entries;
  for (const Variant& v : read_manifest(manifest)) {
    const std::string text = podsim::core::read_text_file(source_dir + "/" + v.source);
    // Every variant once per generation: a binary is scheduled for one generation's latencies.
    for (int g = 0; g < tpc::kGenerationCount; ++g) {
      tpc::AssembleOptions options;
      options.source_name =
          source_dir + "/" + v.source + " [" + v.key + ", " + tpc::kGenerationNames[g] + "]";
      options.defines = v.defines;
      options.generation = static_cast<tpc::Generation>(g);
      const tpc::Assembly a = tpc::assemble(text, options);
      const std::vector<std::uint8_t> binary = tpc::serialize_binary(a.bundles, a.generation);
      const std::string symbol = fmt::format("{}_{}", v.symbol, tpc::kGenerationNames[g]);
      data += fmt::format("inline constexpr std::uint8_t {}[] = {{{}\n}};\n", symbol,
                          byte_array(binary));
      entries += fmt::format("    {{\"{}\", Generation::k{}, {}, sizeof({})}},\n", v.key,
                             camel(tpc::kGenerationNames[g]), symbol, symbol);
    }
  }
  podsim::core::write_if_changed(
      out, fmt::format("// Generated by podsim_tpc_as from {}: do not edit.\n// clang-format off\n"
                       "namespace podsim::tpc::kernel_data {{\n\n{}\n"
                       "inline constexpr KernelBinaryEntry kEntries[] = {{\n{}}};\n\n}}\n",
                       manifest, data, entries));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"podsim_tpc_as: assemble TPC kernels (docs/tpc/isa.md)"};
  std::string source, output, disassemble, manifest, out, source_dir;
  std::vector<std::string> defines;
  app.add_option("source", source, "assembly source to assemble");
  app.add_option("-D,--define", defines, "NAME=VALUE replaces {NAME} in the source");
  app.add_option("-o,--output", output, "write the kernel binary here");
  app.add_option("--disassemble", disassemble, "print this kernel binary as assembly");
  app.add_option("--manifest", manifest, "build every kernel variant this manifest lists");
  app.add_option("--source-dir", source_dir, "where the manifest's sources are");
  app.add_option("--out", out, "with --manifest: the generated C++ library data");
  std::string generation = "gaudi2";
  app.add_option("--generation", generation,
                 "the TPC generation to schedule for (gaudi, gaudi2, gaudi3): its latencies")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    if (!manifest.empty()) return build_library(manifest, source_dir, out);
    if (!disassemble.empty()) {
      const std::string bytes = podsim::core::read_text_file(disassemble);
      std::cout << tpc::disassemble(
          tpc::parse_binary(std::vector<std::uint8_t>(bytes.begin(), bytes.end())));
      return 0;
    }
    if (source.empty()) throw std::invalid_argument("name a source, --disassemble or --manifest");
    tpc::AssembleOptions options;
    options.source_name = source;
    const auto g = tpc::find_generation(generation);
    if (!g)
      throw std::invalid_argument(fmt::format("--generation {}: not a generation", generation));
    options.generation = *g;
    for (const std::string& d : defines) {
      const std::size_t eq = d.find('=');
      if (eq == std::string::npos)
        throw std::invalid_argument(fmt::format("-D {}: write NAME=VALUE", d));
      options.defines[d.substr(0, eq)] = d.substr(eq + 1);
    }
    const tpc::Assembly a = tpc::assemble(podsim::core::read_text_file(source), options);
    const std::vector<std::uint8_t> binary = tpc::serialize_binary(a.bundles, a.generation);
    if (output.empty()) {
      std::cout << tpc::disassemble(a.bundles);
    } else {
      podsim::core::write_if_changed(output, std::string(binary.begin(), binary.end()));
    }
  } catch (const std::exception& e) {
    std::cerr << "podsim_tpc_as: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
