// `podsim validate`: every row of the calibration table (configs/calibration.yaml), model
// against measured. Each runnable row is the podsim command line that models it, run in a child
// process forked from this one (a SystemC kernel elaborates once per process), as many at once
// as the machine has cores; blocked rows say why podsim cannot run them yet. Exit 0 whatever the
// errors: the command reports, the tests hold the bounds. Bad input (the table, --only) exits 2
// before anything runs.
#include <fmt/format.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "sims/calibration.h"
#include "sims/command.h"
#include "sims/forked_run.h"

namespace podsim::sims {
namespace {

struct RowOutcome {
  std::string status = "ok";  // ok, blocked, failed
  double model = 0;
  std::string why;  // blocked or failed
};

std::string row_figure(double v, const std::string& unit) {
  if (unit == "ms") return fmt::format("{:.1f} ms", v);
  if (unit == "TFLOP/s") return fmt::format("{:.1f} TFLOP/s", v);
  return fmt::format("{:.0f} {}", v, unit);
}

class ValidateCommand : public Command {
 public:
  explicit ValidateCommand(CLI::App& app) {
    subcommand =
        app.add_subcommand("validate",
                           "run the calibration table: podsim against public measurements of real "
                           "machines, with the error (docs/validation.md)");
    subcommand->add_option("--table", table_,
                           "the calibration table (default: configs/calibration.yaml)");
    subcommand
        ->add_option("--only", only_,
                     "rows to run, by name or the start of names (gemm, bert-large-hls2)")
        ->delimiter(',');
    subcommand->add_flag("--list", list_, "list the rows and what each exercises, run nothing");
    subcommand->add_option("--jobs", jobs_, "rows run at once (default: the machine's cores)")
        ->check(CLI::Range(1, 256));
  }

  int run(const GlobalOptions& options) override {
    CalibrationTable table;
    try {
      table = load_calibration(table_.empty() ? default_calibration_path() : table_);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    std::vector<const CalibrationRow*> rows;
    std::set<std::string> matched;
    for (const CalibrationRow& row : table.rows) {
      bool take = only_.empty();
      for (const std::string& o : only_) {
        if (row.name == o || row.name.rfind(o, 0) == 0) {
          take = true;
          matched.insert(o);
        }
      }
      if (take) rows.push_back(&row);
    }
    for (const std::string& o : only_) {
      if (matched.count(o)) continue;
      std::string names;
      for (const CalibrationRow& row : table.rows) names += (names.empty() ? "" : ", ") + row.name;
      throw UsageError(fmt::format("validate --only {}: no row is named so (rows: {})", o, names));
    }
    if (list_) {
      for (const CalibrationRow* r : rows) {
        fmt::print("{:<28} {:>16}  {}\n", r->name, row_figure(r->measured, r->unit), r->what);
      }
      return 0;
    }
    std::vector<RowOutcome> outcomes = run_rows(rows);
    print(table, rows, outcomes, options);
    return 0;
  }

 private:
  std::vector<RowOutcome> run_rows(const std::vector<const CalibrationRow*>& rows) const {
    std::vector<RowOutcome> outcomes(rows.size());
    ScratchDir scratch("validate");
    const auto file = [&](std::size_t i, const char* ext) {
      return scratch / fmt::format("row-{}.{}", i, ext);
    };
    const int most =
        jobs_ > 0 ? jobs_ : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::size_t> runnable;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (rows[i]->blocked.empty()) {
        runnable.push_back(i);
      } else {
        outcomes[i] = {"blocked", 0, rows[i]->blocked};
      }
    }
    std::map<pid_t, std::size_t> running;
    std::size_t next = 0, done = 0;
    while (done < runnable.size()) {
      while (next < runnable.size() && static_cast<int>(running.size()) < most) {
        const std::size_t i = runnable[next++];
        running[start_forked_podsim(rows[i]->command(file(i, "json").string()), file(i, "out"),
                                    file(i, "err"))] = i;
      }
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, 0);
      const auto it = running.find(pid);
      if (it == running.end()) continue;
      const std::size_t i = it->second;
      running.erase(it);
      ++done;
      RowOutcome& o = outcomes[i];
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      if (code != 0) {
        o = {"failed", 0, fmt::format("exit {}: {}", code, last_line(file(i, "err")))};
        continue;
      }
      try {
        o.model = rows[i]->model_value(read_file(file(i, "json")));
      } catch (const std::exception& e) {
        o = {"failed", 0, e.what()};
      }
    }
    return outcomes;
  }

  static void print(const CalibrationTable& table, const std::vector<const CalibrationRow*>& rows,
                    const std::vector<RowOutcome>& outcomes, const GlobalOptions& options) {
    if (!options.quiet) {
      fmt::print("calibration table {} ({} rows)\n", table.file, rows.size());
      fmt::print("{:<28} {:>16} {:>16} {:>8}  {}\n", "row", "measured", "podsim", "error",
                 "what it exercises");
    }
    nlohmann::ordered_json out;
    out["table"] = table.file;
    out["rows"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const CalibrationRow& r = *rows[i];
      const RowOutcome& o = outcomes[i];
      nlohmann::ordered_json j{{"name", r.name},         {"what", r.what},
                               {"source", r.source},     {"conditions", r.conditions},
                               {"measured", r.measured}, {"unit", r.unit},
                               {"status", o.status}};
      std::string model = "-", error = "-";
      if (o.status == "ok") {
        const double e = o.model / r.measured - 1;
        j["model"] = o.model;
        j["error"] = e;
        model = row_figure(o.model, r.unit);
        error = fmt::format("{:+.1f}%", 100 * e);
      } else {
        j["why"] = o.why;
      }
      out["rows"].push_back(j);
      if (options.quiet) continue;
      fmt::print("{:<28} {:>16} {:>16} {:>8}  {}\n", r.name, row_figure(r.measured, r.unit), model,
                 error, r.what);
      if (o.status != "ok") fmt::print("{:<28} {}: {}\n", "", o.status, o.why);
    }
    if (!options.json_file.empty()) write_output_file(options.json_file, out.dump(2) + "\n");
  }

  std::string table_;
  std::vector<std::string> only_;
  bool list_ = false;
  int jobs_ = 0;
};

}  // namespace

std::unique_ptr<Command> add_validate_command(CLI::App& app) {
  return std::make_unique<ValidateCommand>(app);
}

}  // namespace podsim::sims
