#include "traces/jobs/job_readers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <utility>

#include "models/common/builtin_registry.hpp"
#include "models/common/located_csv.hpp"
#include "models/common/yaml_reader.hpp"

namespace dnnsim {
namespace {

// The end of every reader of absolute dates: the problems of all rows at once; else the dates as
// seconds since the earliest submission, then a stable sort by submission.
JobTrace rebased(JobTrace trace, const DiagnosticSink& sink) {
  sink.throw_if_any();
  if (trace.jobs.empty()) return trace;
  Seconds origin = trace.jobs.front().submit;
  for (const JobRecord& job : trace.jobs) origin = std::min(origin, job.submit);
  for (JobRecord& job : trace.jobs) job.submit = job.submit - origin;
  std::stable_sort(trace.jobs.begin(), trace.jobs.end(),
                   [](const JobRecord& a, const JobRecord& b) { return a.submit < b.submit; });
  return trace;
}

// Sources documented as sorted: a row submitted before its predecessor is an error at its field.
void check_sorted(const JobTrace& trace, const std::string& column, DiagnosticSink& sink) {
  for (std::size_t i = 1; i < trace.jobs.size(); ++i)
    if (trace.jobs[i].submit < trace.jobs[i - 1].submit)
      sink.error(trace.jobs[i].where,
                 fmt::format("{} {} is before the previous row's {} (rows must be sorted by submission)", column,
                             trace.jobs[i].submit.value(), trace.jobs[i - 1].submit.value()));
}

void check_unique_ids(const JobTrace& trace, DiagnosticSink& sink) {
  std::set<std::string> ids;
  for (const JobRecord& job : trace.jobs)
    if (!ids.insert(job.id).second) sink.error(job.where, fmt::format("job id '{}' appears twice", job.id));
}

SourceLocation field_location(const LocatedCsv& table, const LocatedCsvRow& row, const std::string& column) {
  return table.where(row, table.optional_field(row, column));
}

JobTrace read_philly_csv(const JobTraceFiles& files) {
  DiagnosticSink sink;
  const LocatedCsv table = LocatedCsv::parse(LocatedCsv::read_file(files.file), files.file, sink, ',');
  JobTrace trace{{}, files.file};
  if (table.require({"timestamp", "duration", "num_gpus", "cluster"}, sink)) {
    for (const LocatedCsvRow& row : table.rows()) {
      auto submit = table.date(row, "timestamp", sink);
      auto duration = table.number(row, "duration", sink, 0.0);
      auto gpus = table.integer(row, "num_gpus", sink, 1);
      auto vc = table.text(row, "cluster", sink);
      if (!submit || !duration || !gpus || !vc) continue;
      JobRecord job;
      job.id = fmt::format("philly-{}", row.line);
      job.submit = Seconds(*submit);
      job.duration = Seconds(*duration);
      job.gpus = *gpus;
      job.virtual_cluster = *vc;
      job.where = field_location(table, row, "timestamp");
      trace.jobs.push_back(std::move(job));
    }
  }
  return rebased(std::move(trace), sink);
}

JobTrace read_pollux_workload(const JobTraceFiles& files) {
  DiagnosticSink sink;
  const LocatedCsv table = LocatedCsv::parse(LocatedCsv::read_file(files.file), files.file, sink, ',');
  JobTrace trace{{}, files.file};
  if (table.require({"name", "time", "application", "num_replicas", "batch_size"}, sink)) {
    for (const LocatedCsvRow& row : table.rows()) {
      auto name = table.name(row, "name", sink);
      auto time = table.number(row, "time", sink, 0.0);
      auto application = table.name(row, "application", sink);
      auto replicas = table.integer(row, "num_replicas", sink, 1);
      auto batch = table.integer(row, "batch_size", sink, 1);
      if (!name || !time || !application || !replicas || !batch) continue;
      JobRecord job;
      job.id = *name;
      job.submit = Seconds(*time);
      job.gpus = *replicas;
      job.model = *application;
      job.batch_size = *batch;
      job.where = field_location(table, row, "time");
      job.model_where = field_location(table, row, "application");
      trace.jobs.push_back(std::move(job));
    }
  }
  check_sorted(trace, "time", sink);
  check_unique_ids(trace, sink);
  sink.throw_if_any();
  return trace;
}

JobTrace read_gavel(const JobTraceFiles& files) {
  DiagnosticSink sink;
  const std::vector<std::string> columns{"job_type",       "command",         "working_directory",
                                         "steps_argument", "needs_data_dir",  "total_steps",
                                         "scale_factor",   "priority_weight", "slo",
                                         "arrival_time"};
  const LocatedCsv table = LocatedCsv::parse(LocatedCsv::read_file(files.file), files.file, sink, '\t', columns);
  JobTrace trace{{}, files.file};
  for (const LocatedCsvRow& row : table.rows()) {
    if (row.fields.size() != columns.size()) {
      sink.error({files.file, row.line, 1},
                 fmt::format("expected {} tab-separated fields, found {}", columns.size(), row.fields.size()));
      continue;
    }
    auto type = table.name(row, "job_type", sink);
    auto steps = table.number(row, "total_steps", sink, 1.0);
    auto gpus = table.integer(row, "scale_factor", sink, 1);
    auto arrival = table.number(row, "arrival_time", sink, 0.0);
    // Not simulated, but parse_trace converts them (int, float, float): a row Gavel refuses is refused.
    auto data_dir = table.integer(row, "needs_data_dir", sink, 0);
    auto weight = table.number(row, "priority_weight", sink, 0.0);
    auto slo = table.number(row, "slo", sink);
    if (!type || !steps || !gpus || !arrival || !data_dir || !weight || !slo) continue;
    JobRecord job;
    job.id = fmt::format("gavel-{}", row.line);
    job.submit = Seconds(*arrival);
    job.iterations = *steps;
    job.gpus = *gpus;
    job.model = *type;
    job.where = field_location(table, row, "arrival_time");
    job.model_where = field_location(table, row, "job_type");
    trace.jobs.push_back(std::move(job));
  }
  check_sorted(trace, "arrival time", sink);
  sink.throw_if_any();
  return trace;
}

JobTrace read_philly_json(const JobTraceFiles& files) {
  DiagnosticSink sink;
  YamlReader reader(files.file, sink);
  const YAML::Node root = reader.load_file();
  JobTrace trace{{}, files.file};
  std::vector<YAML::Node> records = root ? reader.list(root, "jobs") : std::vector<YAML::Node>{};
  for (const YAML::Node& record : records) {
    if (!record.IsMap()) {
      reader.error(record, "expected a job object");
      continue;
    }
    auto text_of = [&](const YAML::Node& node, const char* key) -> std::optional<std::string> {
      if (!node[key] || node[key].IsNull()) {
        reader.error(node, fmt::format("missing '{}'", key));
        return std::nullopt;
      }
      return reader.string(node[key]);
    };
    auto id = text_of(record, "jobid");
    auto submitted = text_of(record, "submitted_time");
    std::optional<double> submit;
    if (submitted) {
      submit = parse_datetime(*submitted);
      if (!submit)
        reader.error(record["submitted_time"],
                     fmt::format("expected a date 'YYYY-MM-DD HH:MM:SS', found '{}'", *submitted));
    }
    const YAML::Node attempts = record["attempts"];
    if (!attempts || !attempts.IsSequence()) {
      reader.error(record, "missing 'attempts' list");
      continue;
    }
    if (!id || !submit) continue;
    if (attempts.size() == 0) {
      ++trace.skipped;
      continue;
    }
    std::optional<double> first_start, last_end;
    int gpus = 0;
    bool finished = true;
    for (std::size_t a = 0; a < attempts.size(); ++a) {
      const YAML::Node attempt = attempts[a];
      if (!attempt.IsMap()) {
        reader.error(attempt, "expected an attempt object");
        finished = false;
        continue;
      }
      auto date = [&](const char* key) -> std::optional<double> {
        const YAML::Node value = attempt[key];
        if (!value || value.IsNull()) return std::nullopt;
        const std::optional<std::string> text = reader.string(value);
        if (!text || *text == "None") return std::nullopt;
        auto parsed = parse_datetime(*text);
        if (!parsed) reader.error(value, fmt::format("expected a date 'YYYY-MM-DD HH:MM:SS', found '{}'", *text));
        return parsed;
      };
      auto start = date("start_time");
      auto end = date("end_time");
      if (a == 0) {
        first_start = start;
        for (const YAML::Node& detail : reader.list(attempt["detail"], "placements"))
          if (detail["gpus"] && detail["gpus"].IsSequence()) gpus += static_cast<int>(detail["gpus"].size());
      }
      if (a + 1 == attempts.size()) {
        last_end = end;
        finished = end.has_value();
      }
    }
    if (!first_start || !finished || gpus == 0) {
      ++trace.skipped;
      continue;
    }
    if (*last_end < *first_start) {
      reader.error(attempts[attempts.size() - 1]["end_time"], "end_time before the first attempt's start_time");
      continue;
    }
    JobRecord job;
    job.id = *id;
    job.submit = Seconds(*submit);
    job.duration = Seconds(*last_end - *first_start);
    job.gpus = gpus;
    if (record["vc"]) job.virtual_cluster = reader.string(record["vc"]).value_or("");
    if (record["user"]) job.user = reader.string(record["user"]).value_or("");
    job.where = reader.where(record);
    trace.jobs.push_back(std::move(job));
  }
  return rebased(std::move(trace), sink);
}

JobTrace read_helios(const JobTraceFiles& files) {
  DiagnosticSink sink;
  const LocatedCsv table = LocatedCsv::parse(LocatedCsv::read_file(files.file), files.file, sink, ',');
  JobTrace trace{{}, files.file};
  if (table.require({"job_id", "user", "vc", "gpu_num", "submit_time", "duration"}, sink)) {
    for (const LocatedCsvRow& row : table.rows()) {
      auto id = table.name(row, "job_id", sink);
      auto gpus = table.integer(row, "gpu_num", sink, 0);
      auto submit = table.date(row, "submit_time", sink);
      auto duration = table.number(row, "duration", sink, 0.0);
      auto user = table.text(row, "user", sink);
      auto vc = table.text(row, "vc", sink);
      if (!id || !gpus || !submit || !duration || !user || !vc) continue;
      if (*gpus == 0) {
        ++trace.skipped;
        continue;
      }
      if (*submit < 0) {
        sink.error(field_location(table, row, "submit_time"), "negative submit_time");
        continue;
      }
      JobRecord job;
      job.id = *id;
      job.submit = Seconds(*submit);
      job.duration = Seconds(*duration);
      job.gpus = *gpus;
      job.user = *user;
      job.virtual_cluster = *vc;
      job.where = field_location(table, row, "submit_time");
      trace.jobs.push_back(std::move(job));
    }
  }
  check_unique_ids(trace, sink);
  return rebased(std::move(trace), sink);
}

JobTrace read_alibaba_pai(const JobTraceFiles& files) {
  DiagnosticSink sink;
  auto tasks_path = files.extra.find("tasks");
  if (tasks_path == files.extra.end())
    throw InputError(SourceLocation{files.file},
                     "alibaba-pai needs the task table too (trace key `tasks: pai_task_table.csv`)");
  const LocatedCsv jobs = LocatedCsv::parse(LocatedCsv::read_file(files.file), files.file, sink, ',',
                                            {"job_name", "inst_id", "user", "status", "start_time", "end_time"});
  const LocatedCsv tasks = LocatedCsv::parse(LocatedCsv::read_file(tasks_path->second), tasks_path->second, sink, ',',
                                             {"job_name", "task_name", "inst_num", "status", "start_time", "end_time",
                                              "plan_cpu", "plan_mem", "plan_gpu", "gpu_type"});
  struct Demand {
    double gpus = 0.0;
    std::string gpu_type;
  };
  std::map<std::string, Demand> demand;
  for (const LocatedCsvRow& row : tasks.rows()) {
    auto job = tasks.name(row, "job_name", sink);
    auto instances = tasks.number(row, "inst_num", sink, 0.0);
    const LocatedCsvField* plan = tasks.field(row, "plan_gpu", sink);
    auto type = tasks.text(row, "gpu_type", sink);
    if (!job || !instances || plan == nullptr || !type) continue;
    if (plan->text.empty()) continue;  // CPU task
    auto gpu_percent = tasks.number(row, "plan_gpu", sink, 0.0);
    if (!gpu_percent) continue;
    Demand& d = demand[*job];
    d.gpus += *instances * *gpu_percent / 100.0;
    if (d.gpu_type.empty() && *gpu_percent > 0) d.gpu_type = *type;
  }
  JobTrace trace{{}, files.file};
  for (const LocatedCsvRow& row : jobs.rows()) {
    auto name = jobs.name(row, "job_name", sink);
    auto status = jobs.text(row, "status", sink);
    auto start = jobs.number(row, "start_time", sink, 0.0);
    auto user = jobs.text(row, "user", sink);
    const LocatedCsvField* end_field = jobs.field(row, "end_time", sink);
    if (!name || !status || !start || !user || end_field == nullptr) continue;
    auto it = demand.find(*name);
    if (*status != "Terminated" || it == demand.end() || it->second.gpus <= 0.0 || end_field->text.empty()) {
      ++trace.skipped;
      continue;
    }
    auto end = jobs.number(row, "end_time", sink, 0.0);
    if (!end) continue;
    if (*end < *start) {
      sink.error(jobs.where(row, end_field), "end_time before start_time");
      continue;
    }
    // The job's GPUs, summed over its tasks (inst_num × plan_gpu / 100), are an int count.
    const double gpus = std::ceil(it->second.gpus - 1e-9);
    if (gpus > std::numeric_limits<int>::max()) {
      sink.error(
          field_location(jobs, row, "job_name"),
          fmt::format("job {} asks for {:g} GPUs (inst_num × plan_gpu / 100 over its tasks): too many", *name, gpus));
      continue;
    }
    JobRecord job;
    job.id = *name;
    job.submit = Seconds(*start);
    job.duration = Seconds(*end - *start);
    job.gpus = static_cast<int>(gpus);
    job.gpu_type = it->second.gpu_type == "MISC" ? "" : it->second.gpu_type;
    job.user = *user;
    job.where = field_location(jobs, row, "start_time");
    trace.jobs.push_back(std::move(job));
  }
  return rebased(std::move(trace), sink);
}

// The first of `names` the table has.
std::string column_of(const LocatedCsv& table, std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (table.has(name)) return name;
  return *names.begin();
}

JobTrace read_dnnsim_csv(const JobTraceFiles& files) {
  DiagnosticSink sink;
  const LocatedCsv table = LocatedCsv::parse(LocatedCsv::read_file(files.file), files.file, sink, ',');
  JobTrace trace{{}, files.file};
  const std::string id_col = column_of(table, {"id", "job_id"});
  const std::string submit_col = column_of(table, {"submit_s", "submit_time"});
  const std::string gpus_col = column_of(table, {"gpus", "num_gpu"});
  const std::string duration_col = column_of(table, {"duration_s", "duration"});
  const std::string model_col = column_of(table, {"model", "model_name"});
  if (table.require({id_col, submit_col, gpus_col}, sink)) {
    if (!table.has(duration_col) && !table.has("iterations"))
      sink.error({files.file, 1, 1}, "needs a duration_s or an iterations column (a job's work)");
    for (const LocatedCsvRow& row : table.rows()) {
      auto id = table.name(row, id_col, sink);
      auto submit = table.number(row, submit_col, sink, 0.0);
      auto gpus = table.integer(row, gpus_col, sink, 1);
      JobRecord job;
      auto optional_number = [&](const std::string& column, double min) -> std::optional<double> {
        const LocatedCsvField* f = table.optional_field(row, column);
        if (f == nullptr || f->text.empty()) return std::nullopt;
        return table.number(row, column, sink, min);
      };
      auto optional_text = [&](const std::string& column) {
        const LocatedCsvField* f = table.optional_field(row, column);
        return f ? f->text : std::string();
      };
      auto duration = optional_number(duration_col, 0.0);
      auto iterations = optional_number("iterations", 0.0);
      auto batch = optional_number("batch_size", 1.0);
      // The batch is a count, an int: larger values are errors, not undefined conversions.
      constexpr double kMaxCount = std::numeric_limits<int>::max();
      if (batch && *batch > kMaxCount) {
        sink.error(table.where(row, table.optional_field(row, "batch_size")),
                   fmt::format("batch_size {:g} is too large", *batch));
        batch.reset();
      }
      if (!duration && !iterations)
        sink.error({files.file, row.line, 1}, "job without work: give duration_s or iterations");
      if (!id || !submit || !gpus) continue;
      job.id = *id;
      job.submit = Seconds(*submit);
      job.gpus = *gpus;
      job.duration = Seconds(duration.value_or(0.0));
      job.iterations = iterations.value_or(0.0);
      job.batch_size = static_cast<int>(batch.value_or(0.0));
      job.model = optional_text(model_col);
      job.virtual_cluster = optional_text("virtual_cluster");
      job.user = optional_text("user");
      job.gpu_type = optional_text("gpu_type");
      job.where = field_location(table, row, submit_col);
      if (!job.model.empty()) job.model_where = field_location(table, row, model_col);
      trace.jobs.push_back(std::move(job));
    }
  }
  check_sorted(trace, submit_col, sink);
  check_unique_ids(trace, sink);
  sink.throw_if_any();
  return trace;
}

}  // namespace

void register_builtin_job_trace_readers(JobTraceReaderRegistry& registry) {
  registry.add("philly-csv", "Philly jobs as Pollux ships them: timestamp,duration,num_gpus,gpu_time,cluster",
               "Pollux OSDI'21 artifact simulator/philly.csv", read_philly_csv);
  registry.add("pollux-workload", "Pollux workload: name,time,application,num_replicas,batch_size",
               "Pollux OSDI'21 §5.3 artifact workloads", read_pollux_workload);
  registry.add("gavel", "Gavel trace: tab-separated job type, command, …, total steps, scale factor, …, arrival",
               "Gavel OSDI'20 scheduler/utils.py parse_trace", read_gavel);
  registry.add("philly-json", "Philly cluster_job_log: jobs with attempts (GPUs of the first, first start → last end)",
               "Jeon et al. ATC'19, msr-fiddle/philly-traces", read_philly_json);
  registry.add("helios", "Helios cluster_log.csv (GPU jobs)", "Hu et al. SC'21, S-Lab-System-Group/HeliosData",
               read_helios);
  registry.add("alibaba-pai", "Alibaba PAI pai_job_table + pai_task_table (Terminated GPU jobs)",
               "Weng et al. NSDI'22, alibaba/clusterdata cluster-trace-gpu-v2020", read_alibaba_pai);
  registry.add("dnnsim",
               "dnnsim CSV: id,submit_s,gpus[,duration_s,iterations,model,batch_size,virtual_cluster,user,gpu_type]",
               "dnnsim (superset of Tiresias' simulator CSV)", read_dnnsim_csv);
}

const JobTraceReaderRegistry& builtin_job_trace_readers() {
  return builtin_registry<JobTraceReaderRegistry, register_builtin_job_trace_readers>("job trace format");
}

JobTrace read_job_trace(const std::string& format, const JobTraceFiles& files) {
  return builtin_job_trace_readers().at(format).value(files);
}

}  // namespace dnnsim
