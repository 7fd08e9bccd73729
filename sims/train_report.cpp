#include "sims/train_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "sims/command.h"
#include "sims/svg_plot.h"

namespace podsim::sims {
namespace {

double in_ms(core::TimePs t) { return static_cast<double>(t) * 1e-9; }

void print_stages(const training::Model& model, const training::IpuPipeline& pipeline,
                  const training::Timeline& t) {
  const auto stages = static_cast<int>(pipeline.stages.size());
  const int ramp = pipeline.slots(t.micro_batches) - t.micro_batches;
  fmt::print(
      "pipeline   {} stages, {} schedule: {} slots of {:.3f} ms per step ({} micro-batch{}, {} "
      "to fill and drain); {:.3f} ms per boundary transfer\n",
      stages, training::schedule_name(pipeline.schedule), pipeline.slots(t.micro_batches),
      in_ms(pipeline.slot_ps), t.micro_batches, t.micro_batches == 1 ? "" : "es", ramp,
      in_ms(pipeline.transfer_ps));
  for (int s = 0; s < stages; ++s) {
    const training::PipelineStage& st = pipeline.stages[static_cast<std::size_t>(s)];
    fmt::print(
        "  stage {}  layers {}-{} of {}: {:.3f} ms forward + {:.3f} ms backward per "
        "micro-batch, {:.1f} M parameters, {:.0f} MB on its IPU{}\n",
        s, st.first, st.end - 1, model.layers.size(), in_ms(st.forward_ps), in_ms(st.backward_ps),
        static_cast<double>(st.parameters) * 1e-6, st.memory_bytes * 1e-6,
        st.offloaded ? " (optimizer state in Streaming Memory)" : "");
  }
}

// Where an IPU replica's optimizer state lives (the stages' lines say it for each stage).
void print_optimizer(const training::IpuPipeline& pipeline) {
  const bool streamed = std::any_of(pipeline.stages.begin(), pipeline.stages.end(),
                                    [](const training::PipelineStage& s) { return s.offloaded; });
  const std::string where = pipeline.stages.size() > 1 ? "as each stage's line says"
                            : streamed ? "in Streaming Memory, read and written each step"
                                       : "in In-Processor-Memory";
  fmt::print("optimizer  AdamW state (fp32 master weights and moments) {}{}\n", where,
             pipeline.state_shards > 1
                 ? fmt::format(", sharded over the {} replicas: each updates 1/{} of every "
                               "tensor",
                               pipeline.state_shards, pipeline.state_shards)
                 : "");
}

}  // namespace

void report_scale(const ScaleReport& report, const training::Model& model,
                  const training::StepProfile& profile, const std::vector<nlohmann::json>& points) {
  fmt::print("model      {}\n", model.description);
  fmt::print("system     {} ({} chips), {} strategy{}\n", report.system, profile.chip,
             report.strategy, report.ideal_network ? ", ideal network" : "");
  fmt::print("{:>6} {:>11} {:>12} {:>10} {:>11} {:>11} {:>12} {:>9}\n", "chips", "step_ms",
             "samples/s", "efficiency", "compute_ms", "exposed_ms", "busiest_link", "cpu_s");
  std::ostringstream csv;
  csv << "chips,step_ms,samples_per_s,efficiency,compute_ms,exposed_ms,busiest_link,wall_s\n";
  PlotSeries measured{"podsim", {}}, linear{"linear scaling", {}}, efficiencies{"podsim", {}};
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& p : points) {
    const auto& last = p["steps"].back();
    const int n = p["workers"].get<int>();
    const double step = last["step_ps"].get<double>() * 1e-9;
    const double rate = last["samples_per_s"].get<double>();
    const double eff = last["efficiency"].get<double>();
    const double compute = last["compute_ps"].get<double>() * 1e-9;
    const double exposed = last["exposed_ps"].get<double>() * 1e-9;
    const double wall = p["simulation_cpu_s"].get<double>();
    const double link = p["busiest_link_utilisation"].get<double>();
    fmt::print("{:>6} {:>11.3f} {:>12.1f} {:>9.1f}% {:>11.3f} {:>11.3f} {:>11.1f}% {:>9.2f}\n", n,
               step, rate, 100 * eff, compute, exposed, 100 * link, wall);
    csv << fmt::format("{},{:.6f},{:.3f},{:.6f},{:.6f},{:.6f},{:.6f},{:.2f}\n", n, step, rate, eff,
                       compute, exposed, link, wall);
    measured.points.emplace_back(n, rate);
    linear.points.emplace_back(n, rate / eff);
    efficiencies.points.emplace_back(n, eff);
    rows.push_back({{"chips", n},
                    {"step_ps", last["step_ps"]},
                    {"samples_per_s", rate},
                    {"efficiency", eff},
                    {"compute_ps", last["compute_ps"]},
                    {"exposed_ps", last["exposed_ps"]},
                    {"busiest_link_utilisation", link},
                    {"simulation_cpu_s", wall}});
  }
  if (!report.csv_file.empty()) write_output_file(report.csv_file, csv.str());
  if (!report.plot_file.empty() && !points.empty()) {
    PlotSpec spec;
    spec.title = fmt::format("{} on {}, {}", model.name, report.system, report.strategy);
    spec.x_label = "chips";
    spec.y_label = "samples/s";
    spec.log_x = spec.log_y = true;
    PlotSpec efficiency = spec;
    efficiency.title = "scaling efficiency against linear";
    efficiency.y_label = "efficiency";
    efficiency.log_y = false;
    write_output_file(report.plot_file,
                      svg_plots({{spec, {measured, linear}}, {efficiency, {efficiencies}}}));
  }
  if (!report.json_file.empty()) {
    const nlohmann::json j{{"model", model.name},          {"description", model.description},
                           {"system", report.system},      {"strategy", report.strategy},
                           {"profile", profile.to_json()}, {"points", rows}};
    write_output_file(report.json_file, j.dump(2) + "\n");
  }
}

void print_ipu_plan(const training::Model& model, const training::IpuPipeline& pipeline,
                    const training::Timeline& timeline, bool optimizer_on_chip) {
  if (pipeline.stages.size() > 1) print_stages(model, pipeline, timeline);
  if (optimizer_on_chip) print_optimizer(pipeline);
}

nlohmann::json ipu_plan_json(const training::IpuPipeline& pipeline) {
  nlohmann::json stages = nlohmann::json::array();
  for (const training::PipelineStage& st : pipeline.stages) {
    stages.push_back({{"first_layer", st.first},
                      {"end_layer", st.end},
                      {"forward_ps", st.forward_ps},
                      {"backward_ps", st.backward_ps},
                      {"optimizer_ps", st.optimizer_ps},
                      {"parameters", st.parameters},
                      {"memory_bytes", st.memory_bytes},
                      {"optimizer_state_streamed", st.offloaded}});
  }
  return {{"schedule", training::schedule_name(pipeline.schedule)},
          {"stages", stages},
          {"slot_ps", pipeline.slot_ps},
          {"transfer_ps", pipeline.transfer_ps}};
}

}  // namespace podsim::sims
