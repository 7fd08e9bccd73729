// `podsim sweep FILE`: the points of a sweep file, each a podsim command run as its own process,
// as many at once as the machine has cores; one table, CSV and JSON of every point's rows, a
// failing point reported while the others finish. `podsim plot FILE`: a sweep's or a command's
// rows drawn as SVG. Processes rather than threads because a SystemC kernel is one per process.
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "sims/command.h"
#include "sims/forked_run.h"
#include "sims/parallel/mpi_session.h"
#include "sims/progress.h"
#include "sims/svg_plot.h"
#include "sims/sweep.h"

namespace podsim::sims {
namespace {

namespace fs = std::filesystem;
using Rows = std::vector<nlohmann::ordered_json>;

// What to draw: columns for x, y and the series, with defaults for collective rows.
struct PlotChoice {
  std::string x, y = "busbw_gbps";
  std::vector<std::string> series;

  void add_options(CLI::App* app) {
    app->add_option("--x", x, "column along x (default: size_bytes, else ranks)");
    app->add_option("--y", y, "column along y")->capture_default_str();
    app->add_option("--series", series,
                    "columns whose values make one line each (default: those of system, algo, "
                    "op, type, redop, place that vary)")
        ->delimiter(',');
  }

  static bool has(const Rows& rows, const std::string& column) {
    return std::any_of(rows.begin(), rows.end(), [&](const auto& r) { return r.contains(column); });
  }

  static std::string label(const std::string& column) {
    static const std::map<std::string, std::string> labels = {
        {"size_bytes", "size (bytes)"},
        {"busbw_gbps", "bus bandwidth (GB/s)"},
        {"algbw_gbps", "algorithm bandwidth (GB/s)"},
        {"time_us", "time (us)"},
        {"ranks", "ranks (chips)"}};
    const auto it = labels.find(column);
    return it == labels.end() ? column : it->second;
  }

  std::string svg(const Rows& rows, const std::string& title) const {
    const std::string x_column = !x.empty() ? x : has(rows, "size_bytes") ? "size_bytes" : "ranks";
    for (const auto& column : {x_column, y}) {
      if (!has(rows, column)) throw UsageError(fmt::format("plot: no column '{}'", column));
    }
    std::vector<std::string> by = series;
    if (by.empty()) {
      for (const char* c : {"system", "algo", "op", "type", "redop", "place"}) {
        std::set<std::string> seen;
        for (const auto& r : rows) seen.insert(r.contains(c) ? r[c].dump() : "");
        if (seen.size() > 1 && c != x_column) by.push_back(c);
      }
    }
    std::map<std::string, PlotSeries> lines;
    std::vector<std::string> order;
    for (const auto& r : rows) {
      if (!r.contains(x_column) || !r.contains(y) || !r[x_column].is_number() ||
          !r[y].is_number()) {
        continue;
      }
      std::string name;
      for (const auto& c : by) {
        const std::string value = !r.contains(c)     ? ""
                                  : r[c].is_string() ? r[c].get<std::string>()
                                                     : r[c].dump();
        name += (name.empty() ? "" : " ") + value;
      }
      if (!lines.count(name)) order.push_back(name);
      lines[name].name = name.empty() ? y : name;
      lines[name].points.emplace_back(r[x_column].get<double>(), r[y].get<double>());
    }
    std::vector<PlotSeries> drawn;
    for (const auto& name : order) drawn.push_back(lines[name]);
    PlotSpec spec;
    spec.title = title;
    spec.x_label = label(x_column);
    spec.y_label = label(y);
    spec.log_x = x_column == "size_bytes" || x_column == "ranks";
    spec.x_in_bytes = x_column == "size_bytes";
    try {
      return svg_plot(spec, drawn);
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("plot: {}", e.what()));
    }
  }
};

struct Outcome {
  int status = -1;
  std::string error;   // the point's last line on stderr when it failed
  std::string result;  // its --json, as written
};

// Runs the points, at most `jobs` at once, each writing its JSON into `dir`.
class PointRunner {
 public:
  PointRunner(const fs::path& dir, int jobs, std::vector<std::string> pass_through)
      : dir_(dir), jobs_(jobs), pass_through_(std::move(pass_through)) {}

  // Runs `mine` (indices into `points`); the outcomes of the others stay empty.
  std::vector<Outcome> run(const std::vector<SweepPoint>& points,
                           const std::vector<std::size_t>& mine, ProgressBar& progress) {
    std::vector<Outcome> outcomes(points.size());
    std::map<pid_t, std::size_t> running;
    std::size_t next = 0, done = 0;
    while (done < mine.size()) {
      while (next < mine.size() && static_cast<int>(running.size()) < jobs_) {
        running[start(points[mine[next]])] = mine[next];
        ++next;
      }
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, 0);
      const auto it = running.find(pid);
      if (it == running.end()) continue;
      Outcome& o = outcomes[it->second];
      o.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      if (o.status != 0) o.error = last_line(file(it->second, "err"));
      if (o.status == 0) o.result = read_file(file(it->second, "json"));
      running.erase(it);
      progress.update(static_cast<double>(++done) / static_cast<double>(mine.size()));
    }
    return outcomes;
  }

  fs::path file(std::size_t point, const char* ext) const {
    return dir_ / fmt::format("point-{}.{}", point, ext);
  }

 private:
  // A forked copy of this process runs the point (the sweep itself elaborates nothing).
  pid_t start(const SweepPoint& point) {
    std::vector<std::string> args = point.args;
    args.insert(args.end(), pass_through_.begin(), pass_through_.end());
    const auto index = static_cast<std::size_t>(point.index);
    args.insert(args.end(), {"--json", file(index, "json").string(), "-q"});
    return start_forked_podsim(args, file(index, "out"), file(index, "err"));
  }

  fs::path dir_;
  int jobs_;
  std::vector<std::string> pass_through_;
};

void print_table(const Rows& rows, const SweepSpec& spec) {
  std::vector<std::string> columns = {"point"};
  for (const auto& axis : spec.axes) columns.push_back(axis.name);
  for (const char* c : {"size_bytes", "algo", "time_us", "busbw_gbps"}) {
    if (PlotChoice::has(rows, c) && std::find(columns.begin(), columns.end(), c) == columns.end())
      columns.push_back(c);
  }
  std::vector<std::size_t> width;
  for (const auto& c : columns) width.push_back(std::max<std::size_t>(c.size(), 8));
  const auto text = [](const nlohmann::ordered_json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_float()) return fmt::format("{:.2f}", v.get<double>());
    return v.dump();
  };
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (row.contains(columns[c])) width[c] = std::max(width[c], text(row[columns[c]]).size());
    }
  }
  for (std::size_t c = 0; c < columns.size(); ++c) fmt::print("{:>{}} ", columns[c], width[c]);
  fmt::print("\n");
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      fmt::print("{:>{}} ", row.contains(columns[c]) ? text(row[columns[c]]) : "", width[c]);
    }
    fmt::print("\n");
  }
}

class SweepCommand : public Command {
 public:
  explicit SweepCommand(CLI::App& app) {
    subcommand = app.add_subcommand(
        "sweep", "run every point of a sweep file (YAML) as its own process; one table of rows");
    subcommand->add_option("FILE", file_, "the sweep file")->required();
    subcommand->add_option("--jobs,-j", jobs_, "points at once (default: the machine's cores)");
    subcommand->add_option("--csv", csv_file_, "write every row as CSV");
    subcommand->add_option("--plot", plot_file_, "draw the rows as SVG (see podsim plot)");
    plot_.add_options(subcommand);
  }

  // Under mpirun the points are shared among the processes (each runs its own as processes of
  // its machine) and rank 0 gathers the rows.
  bool runs_under_mpirun() const override { return true; }

  int run(const GlobalOptions& options) override {
    SweepSpec spec;
    try {
      spec = load_sweep(file_);
    } catch (const std::runtime_error& e) {
      throw UsageError(e.what());
    }
    const auto points = sweep_points(spec);
    const int ranks = options.mpi ? options.mpi->size() : 1;
    const int rank = options.mpi ? options.mpi->rank() : 0;
    const int jobs = jobs_ > 0 ? jobs_ : default_jobs();
    agree_on(options, [&] {
      if (rank != 0) return;
      for (const auto& f : {csv_file_, plot_file_}) {
        if (!f.empty()) write_output_file(f, "");  // writable before anything runs
      }
    });
    if (!options.quiet) {
      fmt::print("# sweep {}: {} points, {} at once{}\n", file_, points.size(),
                 std::min<std::size_t>(static_cast<std::size_t>(jobs), points.size()),
                 ranks > 1 ? fmt::format(" in each of {} MPI processes", ranks) : "");
    }
    // Under mpirun, point i runs in process i mod N, as processes of that rank's machine.
    std::vector<std::size_t> mine;
    for (std::size_t i = static_cast<std::size_t>(rank); i < points.size();
         i += static_cast<std::size_t>(ranks)) {
      mine.push_back(i);
    }
    ScratchDir dir("sweep");
    PointRunner runner(dir.path(), jobs, pass_through(options, spec));
    std::vector<Outcome> outcomes;
    {
      ProgressBar progress("sweep", !options.quiet && rank == 0);
      outcomes = runner.run(points, mine, progress);
    }
    if (options.mpi) {
      outcomes = gather_outcomes(*options.mpi, outcomes, mine);
      if (rank != 0) return 0;
    }
    const Gathered gathered = gather(points, outcomes);
    print_table(gathered.rows, spec);
    fmt::print("# {} of {} points ran, {} rows{}\n",
               points.size() - static_cast<std::size_t>(gathered.failed), points.size(),
               gathered.rows.size(),
               gathered.failed ? fmt::format(", {} failed", gathered.failed) : "");
    write_outputs(options, gathered);
    return gathered.failed ? 1 : 0;
  }

 private:
  struct Gathered {
    Rows rows;
    nlohmann::ordered_json points = nlohmann::ordered_json::array();
    int failed = 0;
  };

  // What every point is given beside its own options: the seed, the overrides and (unless an
  // axis sets it) the system given to the sweep.
  static std::vector<std::string> pass_through(const GlobalOptions& options,
                                               const SweepSpec& spec) {
    std::vector<std::string> out = {"--seed", std::to_string(options.seed)};
    if (options.system_given && !std::any_of(spec.axes.begin(), spec.axes.end(),
                                             [](auto& a) { return a.name == "system"; })) {
      out.insert(out.end(), {"--system", options.system});
    }
    for (const auto& o : options.overrides) out.insert(out.end(), {"--set", o});
    return out;
  }

  // Each rank's outcomes of its own points, all at rank 0 (elsewhere: unchanged).
  static std::vector<Outcome> gather_outcomes(const parallel::MpiSession& mpi,
                                              std::vector<Outcome> outcomes,
                                              const std::vector<std::size_t>& mine) {
    nlohmann::json sent = nlohmann::json::array();
    for (std::size_t i : mine) {
      const Outcome& o = outcomes[i];
      sent.push_back({i, o.status, o.error, o.result});
    }
    for (const std::string& text : mpi.gather(sent.dump())) {
      for (const auto& o : nlohmann::json::parse(text)) {
        outcomes[o[0].get<std::size_t>()] = {o[1].get<int>(), o[2], o[3]};
      }
    }
    return outcomes;
  }

  // The machine's cores, shared among the ranks mpirun put on it.
  static int default_jobs() {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return std::max(1, cores / parallel::MpiSession::processes_on_this_machine());
  }

  // The points' rows in point order, whatever order they finished in; failures reported.
  static Gathered gather(const std::vector<SweepPoint>& points,
                         const std::vector<Outcome>& outcomes) {
    Gathered g;
    for (const auto& p : points) {
      Outcome o = outcomes[static_cast<std::size_t>(p.index)];
      nlohmann::ordered_json result;
      if (o.status == 0) {
        try {
          result = nlohmann::ordered_json::parse(o.result);
        } catch (const nlohmann::json::exception&) {
          o.error = "its --json result could not be read";
        }
      }
      nlohmann::ordered_json entry = {{"point", p.index},
                                      {"values", p.describe()},
                                      {"args", p.args},
                                      {"exit_status", o.status}};
      if (o.status != 0 || !o.error.empty()) {
        ++g.failed;
        entry["error"] = o.error;
        fmt::print("# point {} ({}) failed, exit status {}: {}\n", p.index, p.describe(), o.status,
                   o.error);
      } else {
        for (auto& row : point_rows(p, result)) g.rows.push_back(std::move(row));
      }
      g.points.push_back(entry);
    }
    return g;
  }

  void write_outputs(const GlobalOptions& options, const Gathered& g) const {
    if (!csv_file_.empty()) write_output_file(csv_file_, rows_to_csv(g.rows));
    if (!plot_file_.empty() && !g.rows.empty()) {
      write_output_file(plot_file_, plot_.svg(g.rows, fmt::format("podsim sweep {}", file_)));
    }
    if (!options.json_file.empty()) {
      nlohmann::ordered_json j = {
          {"sweep", file_}, {"points", g.points}, {"failed", g.failed}, {"rows", g.rows}};
      write_output_file(options.json_file, j.dump(2) + "\n");
    }
  }

  std::string file_, csv_file_, plot_file_;
  int jobs_ = 0;
  PlotChoice plot_;
};

class PlotCommand : public Command {
 public:
  explicit PlotCommand(CLI::App& app) {
    subcommand = app.add_subcommand(
        "plot", "draw rows (a sweep's or a command's --csv/--json) as an SVG line plot");
    subcommand->add_option("FILE", file_, "rows: .csv, or .json with a 'rows' list")->required();
    subcommand->add_option("-o,--output", output_, "the SVG file")->required();
    subcommand->add_option("--title", title_, "the plot's title (default: the file's name)");
    plot_.add_options(subcommand);
  }

  int run(const GlobalOptions&) override {
    if (!fs::is_regular_file(file_)) throw UsageError(fmt::format("{}: no such file", file_));
    Rows rows;
    try {
      rows = fs::path(file_).extension() == ".json" ? json_rows()
                                                    : rows_from_csv(read_file(file_), file_);
    } catch (const std::exception& e) {
      throw UsageError(e.what());
    }
    if (rows.empty()) throw UsageError(fmt::format("{}: no rows to plot", file_));
    write_output_file(
        output_, plot_.svg(rows, title_.empty() ? fs::path(file_).filename().string() : title_));
    return 0;
  }

 private:
  Rows json_rows() const {
    const auto j = nlohmann::ordered_json::parse(read_file(file_));
    if (!j.contains("rows") || !j["rows"].is_array())
      throw std::runtime_error(fmt::format("{}: no 'rows' list", file_));
    return Rows(j["rows"].begin(), j["rows"].end());
  }

  std::string file_, output_, title_;
  PlotChoice plot_;
};

}  // namespace

std::unique_ptr<Command> add_sweep_command(CLI::App& app) {
  return std::make_unique<SweepCommand>(app);
}
std::unique_ptr<Command> add_plot_command(CLI::App& app) {
  return std::make_unique<PlotCommand>(app);
}

}  // namespace podsim::sims
