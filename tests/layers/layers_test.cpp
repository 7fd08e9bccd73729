// The layers of layers.yaml hold over the source tree: every quoted include of every C++ file
// names a folder its own folder's entry lists (or its own folder), and every folder of code has
// an entry. The tree is read where CMake found it (PODSIM_SOURCE_DIR).
#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Layers {
  std::map<std::string, std::set<std::string>> allowed;  // folder -> folders it may include
  std::map<std::string, std::string> generated;          // include prefix -> its folder
};

Layers load(const std::string& tree = PODSIM_SOURCE_DIR) {
  const YAML::Node root = YAML::LoadFile(tree + "/layers.yaml");
  Layers l;
  for (const auto& kv : root["layers"]) {
    auto& set = l.allowed[kv.first.as<std::string>()];
    for (const auto& d : kv.second) set.insert(d.as<std::string>());
  }
  for (const auto& kv : root["generated"])
    l.generated[kv.first.as<std::string>()] = kv.second.as<std::string>();
  return l;
}

// The entry a path (a folder or a file under the root) belongs to: the longest entry that is the
// path or one of its parent folders; empty when none.
std::string entry_of(const Layers& l, const std::string& path) {
  std::string best;
  for (const auto& [folder, unused] : l.allowed) {
    if ((path == folder || path.rfind(folder + "/", 0) == 0) && folder.size() > best.size())
      best = folder;
  }
  return best;
}

// The folder an included path belongs to: a generated header's generator, else its own entry.
std::string target_of(const Layers& l, const std::string& include) {
  for (const auto& [prefix, folder] : l.generated) {
    if (include == prefix || include.rfind(prefix + "/", 0) == 0 ||
        include.rfind(prefix + ".", 0) == 0)
      return folder;
  }
  return entry_of(l, include);
}

bool skipped(const fs::path& relative) {
  const std::string first = relative.begin()->string();
  return first.empty() || first[0] == '.' || first.rfind("build", 0) == 0;
}

std::vector<std::string> code_files(const std::string& tree) {
  std::vector<std::string> files;
  const fs::path root(tree);
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const fs::path rel = fs::relative(it->path(), root);
    if (it->is_directory() && skipped(rel)) {
      it.disable_recursion_pending();
      continue;
    }
    const std::string ext = it->path().extension().string();
    if (it->is_regular_file() && (ext == ".h" || ext == ".cpp" || ext == ".c"))
      files.push_back(rel.generic_string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The file a line includes in quotes (#include "x/y.h"), if it does. Written out rather than as
// a std::regex, which GCC 12 warns about in sanitized builds.
std::optional<std::string> quoted_include(const std::string& line) {
  std::size_t at = line.find_first_not_of(" \t");
  if (at == std::string::npos || line[at] != '#') return std::nullopt;
  at = line.find_first_not_of(" \t", at + 1);
  if (at == std::string::npos || line.compare(at, 7, "include") != 0) return std::nullopt;
  at = line.find_first_not_of(" \t", at + 7);
  if (at == std::string::npos || line[at] != '"') return std::nullopt;
  const std::size_t end = line.find('"', at + 1);
  if (end == std::string::npos) return std::nullopt;
  return line.substr(at + 1, end - at - 1);
}

// Folders of code in `tree` without an entry.
std::set<std::string> unlisted(const Layers& l, const std::string& tree) {
  std::set<std::string> missing;
  for (const std::string& f : code_files(tree))
    if (entry_of(l, f).empty()) missing.insert(fs::path(f).parent_path().generic_string());
  return missing;
}

// Includes in `tree` that the layers do not allow, as file:line: what.
std::vector<std::string> violations(const Layers& l, const std::string& tree) {
  std::vector<std::string> bad;
  for (const std::string& f : code_files(tree)) {
    const std::string from = entry_of(l, f);
    if (from.empty()) continue;  // unlisted() reports it
    const auto& allowed = l.allowed.at(from);
    if (allowed.count("*")) continue;
    std::ifstream in(tree + "/" + f);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const auto inc_opt = quoted_include(line);
      if (!inc_opt) continue;
      const std::string inc = *inc_opt;
      // A file beside this one (`#include "foo.h"` in its own folder).
      if (inc.find('/') == std::string::npos &&
          fs::exists(fs::path(tree) / fs::path(f).parent_path() / inc))
        continue;
      const std::string to = target_of(l, inc);
      if (to == from || allowed.count(to)) continue;
      bad.push_back(f + ":" + std::to_string(n) + ": " + from + " includes \"" + inc + "\" (" +
                    (to.empty() ? "no entry" : to) + "), which layers.yaml does not let it");
    }
  }
  return bad;
}

template <class C>
std::string lines(const C& items) {
  std::string text;
  for (const auto& i : items) text += "\n  " + i;
  return text;
}

TEST(Layers, EveryFolderOfCodeHasAnEntry) {
  const auto missing = unlisted(load(), PODSIM_SOURCE_DIR);
  EXPECT_TRUE(missing.empty()) << "folders of code without an entry in layers.yaml:"
                               << lines(missing);
}

TEST(Layers, EveryIncludeRunsDownwards) {
  const auto bad = violations(load(), PODSIM_SOURCE_DIR);
  EXPECT_TRUE(bad.empty()) << bad.size() << " includes against the layers:" << lines(bad);
}

// The check on a small tree of its own: an include upwards, one into an unlisted folder and a
// folder without an entry are found; includes downwards, beside a file and of generated headers
// are not.
TEST(Layers, FindsAnUpwardInclude) {
  const fs::path tree = fs::temp_directory_path() / ("podsim_layers_" + std::to_string(::getpid()));
  fs::remove_all(tree);
  const auto write = [&](const std::string& file, const std::string& text) {
    fs::create_directories((tree / file).parent_path());
    std::ofstream(tree / file) << text;
  };
  write("layers.yaml", "generated: {gen/x: low}\nlayers: {low: [], high: [low], tests: ['*']}\n");
  write("low/a.h", "#include \"high/b.h\"\n#include \"a2.h\"\n");
  write("low/a2.h", "#include \"gen/x/t.h\"\n");
  write("high/b.h", "#include \"low/a.h\"\n#include \"gen/x/t.h\"\n#include \"other/c.h\"\n");
  write("tests/t.cpp", "#include \"high/b.h\"\n");
  write("other/c.h", "\n");
  const Layers l = load(tree.string());
  const auto bad = violations(l, tree.string());
  const auto missing = unlisted(l, tree.string());
  fs::remove_all(tree);
  EXPECT_EQ(missing, std::set<std::string>{"other"});
  ASSERT_EQ(bad.size(), 2u) << lines(bad);
  EXPECT_EQ(bad[0].rfind("high/b.h:3: high includes \"other/c.h\" (no entry)", 0), 0u) << bad[0];
  EXPECT_EQ(bad[1].rfind("low/a.h:1: low includes \"high/b.h\" (high)", 0), 0u) << bad[1];
}

// The table itself: entries list only entries, and nothing reaches itself through the others.
TEST(Layers, TableNamesOnlyItsEntriesAndHasNoCycle) {
  const Layers l = load();
  for (const auto& [folder, deps] : l.allowed)
    for (const auto& d : deps)
      EXPECT_TRUE(d == "*" || l.allowed.count(d)) << folder << " lists " << d << ", not an entry";
  for (const auto& [prefix, folder] : l.generated)
    EXPECT_TRUE(l.allowed.count(folder)) << prefix << " is generated by " << folder;
  // Depth-first search for a cycle.
  std::map<std::string, int> state;  // 1 on the path, 2 done
  std::vector<std::string> path;
  std::function<bool(const std::string&)> visit = [&](const std::string& f) {
    if (state[f] == 2) return false;
    if (state[f] == 1) return true;
    state[f] = 1;
    path.push_back(f);
    for (const auto& d : l.allowed.at(f))
      if (d != "*" && visit(d)) return true;
    path.pop_back();
    state[f] = 2;
    return false;
  };
  for (const auto& [folder, unused] : l.allowed) {
    if (visit(folder)) {
      std::string text;
      for (const auto& p : path) text += p + " -> ";
      ADD_FAILURE() << "a cycle: " << text << "...";
      break;
    }
  }
}

}  // namespace
