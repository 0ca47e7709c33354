// Reads a TaskGraph from JSON (see task_graph_json.hpp; writing is task_graph_json_writer.cpp).
#include "models/program/task_graph_json.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "models/common/parse_number.hpp"
#include "models/common/yaml_reader.hpp"

namespace dnnsim {
namespace {

// An unknown-name message lists the valid names only when there are few of them (a graph can have
// thousands of devices); otherwise it only suggests the closest one.
constexpr std::size_t kMaxListedNames = 16;

enum class Kind { compute, transfer, collective };
const std::vector<std::string> kKindNames{"compute", "transfer", "collective"};  // indexed by Kind

// The keys only one kind of task may have; any other kind reports them as unknown.
const std::vector<std::string_view> kComputeKeys{"device", "flops",    "bytes_accessed",  "dtype",      "kernel",
                                                 "gemm",   "launches", "measured_time_s", "measured_on"};
const std::vector<std::string_view> kTransferKeys{"src", "dst", "size_bytes", "host_copy"};
const std::vector<std::string_view> kCollectiveKeys{"collective", "group", "size_bytes", "algorithm", "root",
                                                    "fidelity",   "calls", "mirrored",   "copies",    "alone"};

// yaml-cpp tags a plain scalar "?" and a quoted one "!": JSON numbers, true/false and null are plain,
// JSON strings quoted. Checking the tag keeps "1e12" from passing for a number and 5 for a string.
bool is_plain(const YAML::Node& node) { return node.IsScalar() && node.Tag() == "?"; }
bool is_quoted(const YAML::Node& node) { return node.IsScalar() && node.Tag() != "?"; }

// The value as a JSON user would name it, for "expected X, got Y".
std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
      return "nothing";
    case YAML::NodeType::Null:
      return "null";
    case YAML::NodeType::Scalar:
      return is_plain(node) ? node.Scalar() : fmt::format("the string \"{}\"", node.Scalar());
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "an object";
  }
  return "something else";
}

std::string unknown_name_suffix(const std::string& word, const std::vector<std::string>& names) {
  if (names.size() <= kMaxListedNames) return suggestion_suffix(word, names);
  const std::string match = closest_match(word, names);
  return match.empty() ? std::string() : fmt::format("; did you mean '{}'?", match);
}

// Reads one document into a TaskGraph, recording every problem in the sink instead of stopping at
// the first. Names are resolved as they are read; dependencies once every id is known.
class Parser {
 public:
  Parser(const std::string& file, DiagnosticSink& sink) : reader_(file, sink) {}

  // The graph read; meaningful only when the sink stayed empty.
  TaskGraph parse(const YAML::Node& root);

 private:
  struct Dependency {
    std::int64_t id = 0;
    YAML::Node node;
  };
  struct PendingTask {
    Task task;
    SourceLocation origin;  // the task's place in the file
    std::vector<Dependency> deps;
    // False when a name of the task could not be resolved: the task then holds placeholder
    // indices, which TaskGraph::validate() must not report a second time.
    bool op_ok = true;
    bool stream_ok = true;
  };
  struct FirstUse {
    TaskId task = 0;
    YAML::Node node;
  };

  void error(const YAML::Node& node, std::string message) { reader_.error(node, std::move(message)); }
  std::optional<std::string> string(const YAML::Node& node, std::string_view key);
  std::optional<double> number(const YAML::Node& node, std::string_view key);
  std::optional<std::int64_t> integer(const YAML::Node& node, std::string_view key, std::int64_t min, std::int64_t max);
  std::optional<bool> boolean(const YAML::Node& node, std::string_view key);
  // The index of the string `node` in `names`, or "unknown <what> 'x'; did you mean 'y'?".
  std::optional<std::size_t> pick(const YAML::Node& node, std::string_view key, std::string_view what,
                                  const std::vector<std::string>& names);
  std::optional<DeviceId> device(const YAML::Node& node, std::string_view key);
  // Optional non-negative quantity: keeps `out` (the default) when the key is absent.
  template <class Q>
  void read_amount(MapReader& map, std::string_view key, Q& out, bool required = false);

  bool read_header(MapReader& top);
  std::vector<std::string> read_names(MapReader& top, std::string_view key, std::string_view what);
  void read_mirrors(MapReader& top);
  void read_task(const YAML::Node& node, std::size_t index);
  void read_compute(MapReader& map, PendingTask& pending);
  // `gemm: [m, n, k]` or `[m, n, k, op]`, each dimension a whole number in [1, 2³² − 1], op a GemmOp
  // name (nn when not given).
  void read_gemm_shape(const YAML::Node& node, GemmShape& out);
  void read_transfer(MapReader& map, PendingTask& pending);
  void read_collective(MapReader& map, PendingTask& pending);
  TaskGraph build();

  YamlReader reader_;
  const std::vector<std::string> phase_names_ = phase_names();
  const std::vector<std::string> dtype_names_ = dtype_names();
  const std::vector<std::string> kernel_names_ = layer_kind_names();
  const std::vector<std::string> gemm_op_names_ = gemm_op_names();
  const std::vector<std::string> collective_names_ = collective_kind_names();
  const std::vector<std::string> fidelity_names_ = collective_fidelity_names();
  const std::vector<std::string> host_copy_names_ = host_copy_names();
  std::vector<std::string> devices_;
  std::vector<std::string> streams_;
  std::vector<std::pair<DeviceId, DeviceId>> mirrors_;  // (copy, source), TaskGraph::set_mirror
  std::vector<PendingTask> tasks_;
  std::map<std::int64_t, FirstUse> ids_;  // file id → TaskId (position among the tasks read)
};

std::optional<std::string> Parser::string(const YAML::Node& node, std::string_view key) {
  if (is_quoted(node)) return node.Scalar();
  error(node, fmt::format("expected a string for '{}', got {}", key, describe(node)));
  return std::nullopt;
}

std::optional<double> Parser::number(const YAML::Node& node, std::string_view key) {
  if (is_plain(node)) {
    const std::string& text = node.Scalar();
    if (const auto value = parse_number<double>(text)) {
      if (*value >= 0) return value;
      error(node, fmt::format("'{}' cannot be negative, got {}", key, text));
      return std::nullopt;
    }
  }
  error(node, fmt::format("expected a number for '{}', got {}", key, describe(node)));
  return std::nullopt;
}

std::optional<std::int64_t> Parser::integer(const YAML::Node& node, std::string_view key, std::int64_t min,
                                            std::int64_t max) {
  if (is_plain(node)) {
    if (const auto parsed = parse_number<std::int64_t>(node.Scalar())) {
      const std::int64_t value = *parsed;
      if (value >= min && value <= max) return value;
      error(node, max == std::numeric_limits<std::int64_t>::max()
                      ? fmt::format("'{}' must be an integer >= {}, got {}", key, min, value)
                      : fmt::format("'{}' must be an integer in [{}, {}], got {}", key, min, max, value));
      return std::nullopt;
    }
  }
  error(node, fmt::format("expected an integer for '{}', got {}", key, describe(node)));
  return std::nullopt;
}

std::optional<bool> Parser::boolean(const YAML::Node& node, std::string_view key) {
  if (is_plain(node) && (node.Scalar() == "true" || node.Scalar() == "false")) return node.Scalar() == "true";
  error(node, fmt::format("expected true or false for '{}', got {}", key, describe(node)));
  return std::nullopt;
}

std::optional<std::size_t> Parser::pick(const YAML::Node& node, std::string_view key, std::string_view what,
                                        const std::vector<std::string>& names) {
  auto text = string(node, key);
  if (!text) return std::nullopt;
  auto it = std::find(names.begin(), names.end(), *text);
  if (it != names.end()) return static_cast<std::size_t>(it - names.begin());
  error(node, fmt::format("unknown {} '{}'{}", what, *text, unknown_name_suffix(*text, names)));
  return std::nullopt;
}

std::optional<DeviceId> Parser::device(const YAML::Node& node, std::string_view key) {
  if (auto index = pick(node, key, "device", devices_)) return static_cast<DeviceId>(*index);
  return std::nullopt;
}

template <class Q>
void Parser::read_amount(MapReader& map, std::string_view key, Q& out, bool required) {
  const YAML::Node node = required ? map.require(key) : map.get(key);
  if (!node.IsDefined()) return;
  if (auto value = number(node, key)) out = Q(*value);
}

bool Parser::read_header(MapReader& top) {
  bool ok = true;
  const YAML::Node format = top.require("format");
  if (format.IsDefined()) {
    auto text = string(format, "format");
    if (text && *text != kTaskGraphFormat)
      error(format,
            fmt::format("expected format '{}', got '{}': not a dnnsim TaskGraph file", kTaskGraphFormat, *text));
    ok = ok && text && *text == kTaskGraphFormat;
  }
  const YAML::Node version = top.require("version");
  if (version.IsDefined()) {
    auto value = integer(version, "version", 0, std::numeric_limits<std::int64_t>::max());
    if (value && *value != kTaskGraphVersion)
      error(version, fmt::format("unsupported version {}; this dnnsim reads version {}", *value, kTaskGraphVersion));
    ok = ok && value && *value == kTaskGraphVersion;
  }
  return ok;
}

std::vector<std::string> Parser::read_names(MapReader& top, std::string_view key, std::string_view what) {
  std::vector<std::string> names;
  const YAML::Node list = top.require(key);
  if (!list.IsDefined()) return names;
  if (!list.IsSequence()) {
    error(list, fmt::format("expected a list of {} names for '{}', got {}", what, key, describe(list)));
    return names;
  }
  for (const auto& item : list) {
    auto name = string(item, key);
    if (!name) continue;
    if (name->empty()) {
      error(item, fmt::format("a {} name cannot be empty", what));
    } else if (std::find(names.begin(), names.end(), *name) != names.end()) {
      error(item, fmt::format("duplicate {} name '{}'", what, *name));
    } else {
      names.push_back(*name);
    }
  }
  return names;
}

// Optional `mirrors`: {copy device: source device} (TaskGraph::set_mirror).
void Parser::read_mirrors(MapReader& top) {
  const YAML::Node mirrors = top.get("mirrors");
  if (!mirrors.IsDefined()) return;
  if (!mirrors.IsMap()) {
    error(mirrors, fmt::format("expected an object of device names for 'mirrors', got {}", describe(mirrors)));
    return;
  }
  for (const auto& entry : mirrors) {
    const std::optional<DeviceId> copy = device(entry.first, "mirrors");
    const std::optional<DeviceId> source = device(entry.second, "mirrors");
    if (copy && source && *copy == *source)
      error(entry.second, fmt::format("device '{}' cannot mirror itself", entry.first.Scalar()));
    else if (copy && source)
      mirrors_.emplace_back(*copy, *source);
  }
}

void Parser::read_task(const YAML::Node& node, std::size_t index) {
  const std::string context = fmt::format("tasks[{}]", index);
  MapReader map(reader_, node, context);
  if (!map.valid()) return;

  PendingTask pending;
  Task& task = pending.task;
  pending.origin = reader_.where(node);

  if (const YAML::Node id_node = map.require("id"); id_node.IsDefined()) {
    if (auto id = integer(id_node, "id", 0, std::numeric_limits<std::int64_t>::max())) {
      auto [it, inserted] = ids_.emplace(*id, FirstUse{static_cast<TaskId>(tasks_.size()), id_node});
      if (!inserted)
        error(id_node,
              fmt::format("duplicate task id {} (first used at line {})", *id, reader_.where(it->second.node).line));
    }
  }

  std::optional<Kind> kind;
  if (const YAML::Node kind_node = map.require("kind"); kind_node.IsDefined())
    if (auto index_of = pick(kind_node, "kind", "task kind", kKindNames)) kind = static_cast<Kind>(*index_of);

  pending.stream_ok = false;
  if (const YAML::Node stream_node = map.require("stream"); stream_node.IsDefined()) {
    if (auto stream = pick(stream_node, "stream", "stream", streams_)) {
      task.stream = static_cast<StreamId>(*stream);
      pending.stream_ok = true;
    }
  }

  task.phase = kind == Kind::compute || !kind ? Phase::other : Phase::communication;
  if (const YAML::Node phase_node = map.get("phase"); phase_node.IsDefined())
    if (auto index = pick(phase_node, "phase", "phase", phase_names_))
      task.phase = *phase_from_name(phase_names_[*index]);

  if (const YAML::Node iteration_node = map.get("iteration"); iteration_node.IsDefined())
    if (auto iteration = integer(iteration_node, "iteration", 0, std::numeric_limits<std::uint32_t>::max()))
      task.iteration = static_cast<std::uint32_t>(*iteration);

  if (const YAML::Node label = map.get("label"); label.IsDefined())
    if (auto text = string(label, "label")) task.label = *text;

  if (const YAML::Node deps = map.get("deps"); deps.IsDefined()) {
    if (!deps.IsSequence()) {
      error(deps, fmt::format("expected a list of task ids for 'deps', got {}", describe(deps)));
    } else {
      for (const auto& dep : deps)
        if (auto id = integer(dep, "deps", 0, std::numeric_limits<std::int64_t>::max()))
          pending.deps.push_back(Dependency{*id, dep});
    }
  }

  read_amount(map, "alloc_bytes", task.alloc_bytes);
  read_amount(map, "free_bytes", task.free_bytes);

  if (!kind) {
    // The kind is unknown or missing (already reported): accept every kind's keys, so that only
    // keys that fit no kind at all are reported.
    for (const auto* keys : {&kComputeKeys, &kTransferKeys, &kCollectiveKeys})
      for (std::string_view key : *keys) (void)map.get(key);
    pending.op_ok = false;
  } else {
    switch (*kind) {
      case Kind::compute:
        read_compute(map, pending);
        break;
      case Kind::transfer:
        read_transfer(map, pending);
        break;
      case Kind::collective:
        read_collective(map, pending);
        break;
    }
  }
  map.finish();
  tasks_.push_back(std::move(pending));
}

void Parser::read_gemm_shape(const YAML::Node& node, GemmShape& out) {
  if (!node.IsSequence() || (node.size() != 3 && node.size() != 4)) {
    error(node, fmt::format("expected 'gemm' as [m, n, k] or [m, n, k, op], three whole numbers and one of {}, got {}",
                            fmt::join(gemm_op_names_, ", "), describe(node)));
    return;
  }
  std::optional<std::int64_t> dims[3];
  for (std::size_t d = 0; d < 3; ++d) dims[d] = integer(node[d], "gemm", 1, 4294967295);
  std::optional<std::size_t> op = 0;
  if (node.size() == 4) op = pick(node[3], "gemm", "GEMM op", gemm_op_names_);
  if (dims[0] && dims[1] && dims[2] && op)
    out = GemmShape{static_cast<std::uint32_t>(*dims[0]), static_cast<std::uint32_t>(*dims[1]),
                    static_cast<std::uint32_t>(*dims[2]), static_cast<GemmOp>(*op)};
}

void Parser::read_compute(MapReader& map, PendingTask& pending) {
  Compute compute;
  const YAML::Node device_node = map.require("device");
  std::optional<DeviceId> device_id;
  if (device_node.IsDefined()) device_id = device(device_node, "device");
  if (device_id) compute.device = *device_id;
  pending.op_ok = device_id.has_value();

  read_amount(map, "flops", compute.flops);
  read_amount(map, "bytes_accessed", compute.bytes_accessed);
  if (const YAML::Node dtype = map.get("dtype"); dtype.IsDefined())
    if (auto index = pick(dtype, "dtype", "dtype", dtype_names_))
      compute.dtype = *dtype_from_name(dtype_names_[*index]);
  if (const YAML::Node kernel = map.get("kernel"); kernel.IsDefined())
    if (auto index = pick(kernel, "kernel", "kernel kind", kernel_names_))
      compute.kernel = *layer_kind_from_name(kernel_names_[*index]);
  if (const YAML::Node gemm = map.get("gemm"); gemm.IsDefined()) read_gemm_shape(gemm, compute.gemm);
  if (const YAML::Node launches = map.get("launches"); launches.IsDefined())
    if (auto count = integer(launches, "launches", 1, std::numeric_limits<std::uint16_t>::max()))
      compute.launches = static_cast<std::uint16_t>(*count);

  // A measured time is only usable with the GPU it was measured on (to scale it to other GPUs), and
  // a GPU name without a time means nothing: each requires the other.
  const YAML::Node time = map.get("measured_time_s");
  const YAML::Node measured_on = map.get("measured_on");
  if (time.IsDefined()) {
    if (auto seconds = number(time, "measured_time_s")) compute.measured_time = Seconds(*seconds);
    if (!measured_on.IsDefined())
      error(time, "'measured_time_s' needs 'measured_on', the GPU model the time was measured on");
  }
  if (measured_on.IsDefined()) {
    if (!time.IsDefined()) {
      error(measured_on, "'measured_on' is given without 'measured_time_s'");
    } else if (auto gpu = string(measured_on, "measured_on")) {
      if (gpu->empty()) error(measured_on, "'measured_on' must name a GPU model");
      compute.measured_on = *gpu;
    }
  }
  pending.task.op = std::move(compute);
}

void Parser::read_transfer(MapReader& map, PendingTask& pending) {
  Transfer transfer;
  std::optional<DeviceId> src;
  std::optional<DeviceId> dst;
  if (const YAML::Node node = map.require("src"); node.IsDefined()) src = device(node, "src");
  if (const YAML::Node node = map.require("dst"); node.IsDefined()) dst = device(node, "dst");
  if (src) transfer.src = *src;
  if (dst) transfer.dst = *dst;
  pending.op_ok = src && dst;
  read_amount(map, "size_bytes", transfer.size, /*required=*/true);
  if (const YAML::Node node = map.get("host_copy"); node.IsDefined())
    if (auto index = pick(node, "host_copy", "host copy", host_copy_names_))
      transfer.host = *host_copy_from_name(host_copy_names_[*index]);
  pending.task.op = std::move(transfer);
}

void Parser::read_collective(MapReader& map, PendingTask& pending) {
  Collective collective;
  std::optional<CollectiveKind> kind;
  if (const YAML::Node node = map.require("collective"); node.IsDefined())
    if (auto index = pick(node, "collective", "collective", collective_names_))
      kind = collective_kind_from_name(collective_names_[*index]);
  if (kind) collective.kind = *kind;

  bool ok = true;
  const YAML::Node group = map.require("group");
  if (!group.IsDefined()) {
    ok = false;
  } else if (!group.IsSequence()) {
    error(group, fmt::format("expected a list of device names for 'group', got {}", describe(group)));
    ok = false;
  } else {
    for (const auto& member : group) {
      if (auto id = device(member, "group"))
        collective.group.push_back(*id);
      else
        ok = false;
    }
  }
  read_amount(map, "size_bytes", collective.size, /*required=*/true);
  if (const YAML::Node node = map.get("algorithm"); node.IsDefined())
    if (auto name = string(node, "algorithm")) collective.algorithm = *name;
  if (const YAML::Node node = map.get("fidelity"); node.IsDefined())
    if (auto index = pick(node, "fidelity", "collective fidelity", fidelity_names_))
      collective.fidelity = collective_fidelity_from_name(fidelity_names_[*index]);
  if (const YAML::Node node = map.get("calls"); node.IsDefined())
    if (auto count = integer(node, "calls", 1, std::numeric_limits<std::uint32_t>::max()))
      collective.calls = static_cast<std::uint32_t>(*count);
  if (const YAML::Node node = map.get("mirrored"); node.IsDefined())
    if (auto mirrored = boolean(node, "mirrored")) collective.mirrored = *mirrored;
  if (const YAML::Node node = map.get("alone"); node.IsDefined())
    if (auto alone = boolean(node, "alone")) collective.alone = *alone;
  if (const YAML::Node node = map.get("copies"); node.IsDefined())
    if (auto count = integer(node, "copies", 1, std::numeric_limits<std::uint32_t>::max()))
      collective.copies = static_cast<std::uint32_t>(*count);

  // The root matters to a broadcast only. Other kinds accept the key (tools often write it for
  // every collective) and check its name, but keep the first group member, as the dump (which omits
  // their root) reads back.
  if (!collective.group.empty()) collective.root = collective.group.front();
  if (const YAML::Node root = map.get("root"); root.IsDefined()) {
    const std::optional<DeviceId> id = device(root, "root");
    if (collective.kind == CollectiveKind::broadcast) {
      if (id)
        collective.root = *id;
      else
        ok = false;
    }
  }
  pending.op_ok = ok;
  pending.task.op = std::move(collective);
}

TaskGraph Parser::parse(const YAML::Node& root) {
  MapReader top(reader_, root, "the task graph");
  if (!top.valid()) return TaskGraph();
  // Another format or version would only produce misleading errors: stop there.
  if (!read_header(top)) return TaskGraph();

  devices_ = read_names(top, "devices", "device");
  streams_ = read_names(top, "streams", "stream");
  read_mirrors(top);
  if (const YAML::Node tasks = top.require("tasks"); tasks.IsDefined()) {
    if (!tasks.IsSequence()) {
      error(tasks, fmt::format("expected a list of tasks for 'tasks', got {}", describe(tasks)));
    } else {
      std::size_t index = 0;
      for (const auto& task : tasks) read_task(task, index++);
    }
  }
  top.finish();
  return build();
}

TaskGraph Parser::build() {
  for (PendingTask& pending : tasks_) {
    for (const Dependency& dep : pending.deps) {
      auto it = ids_.find(dep.id);
      if (it == ids_.end())
        error(dep.node, fmt::format("dangling dependency: no task has id {}", dep.id));
      else
        pending.task.deps.push_back(it->second.task);
    }
  }

  TaskGraph graph;
  for (const std::string& name : devices_) graph.add_device(name);
  for (const std::string& name : streams_) graph.add_stream(name);
  for (const auto& [copy, source] : mirrors_) graph.set_mirror(copy, source);
  for (const PendingTask& pending : tasks_) graph.add(pending.task, pending.origin);

  // validate() sees a copy in which each task whose names did not resolve (already reported) is
  // harmless: its op becomes a compute task on a device of its own and its stream a stream of its
  // own, so that neither an index nor a stream order is reported or invented for it; only its
  // dependencies are still checked.
  TaskGraph checked = graph;
  for (std::size_t i = 0; i < tasks_.size(); ++i) {
    Task& task = checked.tasks()[i];
    if (!tasks_[i].op_ok) {
      Compute placeholder;
      placeholder.device = checked.add_device(fmt::format("(unresolved device of task {})", i));
      task.op = placeholder;
    }
    if (!tasks_[i].stream_ok) task.stream = checked.add_stream(fmt::format("(unresolved stream of task {})", i));
  }
  reader_.sink().append(checked.validate());
  return graph;
}

}  // namespace

TaskGraph parse_task_graph(const std::string& text, const std::string& file_name_for_messages) {
  DiagnosticSink sink;
  Parser parser(file_name_for_messages, sink);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    YamlReader reader(file_name_for_messages, sink);
    sink.error(reader.where(e.mark), fmt::format("JSON syntax error: {}", e.msg));
    sink.throw_if_any();
  }
  TaskGraph graph = parser.parse(root);
  sink.throw_if_any();
  return graph;
}

TaskGraph load_task_graph(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourceLocation{path, 0, 0}, fmt::format("cannot open file: {}", std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_task_graph(text.str(), path);
}

}  // namespace dnnsim
