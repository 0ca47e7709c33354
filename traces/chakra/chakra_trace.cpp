// Reads MLCommons Chakra execution traces into a TaskGraph (see chakra_trace.hpp; writing is
// chakra_export.cpp).
#include "traces/chakra/chakra_trace.hpp"

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "chakra/schema/et_def.pb.h"  // generated from traces/chakra/schema/et_def.proto

namespace dnnsim {
namespace {

namespace pb = ChakraProtoMsg;

// ---- attributes ---------------------------------------------------------------------------------

const pb::AttributeProto* find_attr(const pb::Node& node, std::string_view name) {
  for (const pb::AttributeProto& attr : node.attr())
    if (attr.name() == name) return &attr;
  return nullptr;
}

// An integer attribute of any integer encoding (writers differ: int64_val, uint64_val, int32_val…).
std::optional<std::int64_t> int_value(const pb::AttributeProto& attr) {
  using V = pb::AttributeProto;
  switch (attr.value_case()) {
    case V::kInt32Val:
      return attr.int32_val();
    case V::kInt64Val:
      return attr.int64_val();
    case V::kUint32Val:
      return attr.uint32_val();
    case V::kUint64Val:
      return static_cast<std::int64_t>(attr.uint64_val());
    case V::kSint32Val:
      return attr.sint32_val();
    case V::kSint64Val:
      return attr.sint64_val();
    case V::kFixed32Val:
      return attr.fixed32_val();
    case V::kFixed64Val:
      return static_cast<std::int64_t>(attr.fixed64_val());
    case V::kSfixed32Val:
      return attr.sfixed32_val();
    case V::kSfixed64Val:
      return attr.sfixed64_val();
    default:
      return std::nullopt;
  }
}

std::optional<double> number_value(const pb::AttributeProto& attr) {
  if (attr.value_case() == pb::AttributeProto::kDoubleVal) return attr.double_val();
  if (attr.value_case() == pb::AttributeProto::kFloatVal) return attr.float_val();
  if (auto i = int_value(attr)) return static_cast<double>(*i);
  return std::nullopt;
}

// ---- reading one file ---------------------------------------------------------------------------

struct RankFile {
  std::string path;
  pb::GlobalMetadata metadata;
  std::vector<pb::Node> nodes;  // message index = position + 1
};

SourceLocation at(const std::string& path, std::size_t message) {
  return SourceLocation{fmt::format("{}: message {}", path, message), 0, 0};
}

// Stops at the first unreadable message: what follows a bad length cannot be framed.
RankFile read_file(const std::string& path, DiagnosticSink& sink) {
  // A message protobuf cannot parse (invalid UTF-8 in a string field, a bad tag) is reported below,
  // located by message index; protobuf's own log line on stderr would only repeat it, unlocated.
  static const bool protobuf_quiet = (google::protobuf::SetLogHandler(nullptr), true);
  (void)protobuf_quiet;
  RankFile file{path, {}, {}};
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    sink.error(SourceLocation{path, 0, 0}, "cannot open the file");
    return file;
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                                static_cast<int>(std::min<std::size_t>(bytes.size(), INT_MAX)));
  stream.SetTotalBytesLimit(INT_MAX);
  for (std::size_t message = 0;; ++message) {
    const int offset = stream.CurrentPosition();
    if (static_cast<std::size_t>(offset) >= bytes.size()) {
      if (message == 0) sink.error(SourceLocation{path, 0, 0}, "empty file: expected a GlobalMetadata message");
      break;
    }
    std::uint32_t size = 0;
    if (!stream.ReadVarint32(&size)) {
      sink.error(at(path, message), fmt::format("truncated message length at byte {}", offset));
      break;
    }
    const std::size_t begin = static_cast<std::size_t>(stream.CurrentPosition());
    if (begin + size > bytes.size()) {
      sink.error(at(path, message), fmt::format("truncated: the message needs {} bytes, the file has {} left", size,
                                                bytes.size() - begin));
      break;
    }
    const char* data = bytes.data() + begin;
    bool parsed = false;
    if (message == 0) {
      parsed = file.metadata.ParseFromArray(data, static_cast<int>(size));
    } else {
      parsed = file.nodes.emplace_back().ParseFromArray(data, static_cast<int>(size));
    }
    if (!parsed) {
      sink.error(at(path, message), fmt::format("not a valid Chakra {} message ({} bytes)",
                                                message == 0 ? "GlobalMetadata" : "Node", size));
      break;
    }
    stream.Skip(static_cast<int>(size));
  }
  return file;
}

// ---- import -------------------------------------------------------------------------------------

enum class Role { local, metadata, collective, send, recv };

// A node's place in the merged graph: a task of its own, or a share of a collective or transfer.
struct NodeRef {
  Role role = Role::local;
  std::size_t slot = 0;  // index into Importer::slots_ (every role but metadata)
};

// One TaskGraph task: a local node, the members of a collective, or a send and its receive.
struct Slot {
  Task task;
  std::vector<std::pair<std::size_t, std::size_t>> nodes;  // (rank, node index) of every share
  std::set<std::size_t> members;                           // collectives: the ranks taking part
  std::size_t arrived = 0;                                 // merge: members waiting at it
  std::optional<TaskId> id;
  std::uint64_t exported_id = 0;  // node id in a dnnsim-written set (its TaskId)
};

const std::set<std::string, std::less<>> kKnownAttributes{"is_cpu_op", "comm_type",  "comm_size", "comm_src",
                                                          "comm_dst",  "comm_tag",   "pg_name",   "comm_group",
                                                          "num_ops",   "tensor_size"};

std::optional<CollectiveKind> collective_of(std::int64_t comm_type) {
  switch (comm_type) {
    case pb::ALL_REDUCE:
    case pb::BARRIER:  // an empty all-reduce: every member waits for all
      return CollectiveKind::all_reduce;
    case pb::ALL_GATHER:
      return CollectiveKind::all_gather;
    case pb::REDUCE_SCATTER:
    case pb::REDUCE_SCATTER_BLOCK:
      return CollectiveKind::reduce_scatter;
    case pb::BROADCAST:
      return CollectiveKind::broadcast;
    case pb::ALL_TO_ALL:
      return CollectiveKind::all_to_all;
    default:
      return std::nullopt;  // REDUCE, GATHER, SCATTER: rooted collectives dnnsim does not model
  }
}

class Importer {
 public:
  Importer(const std::vector<std::string>& files, const std::vector<std::string>& devices,
           const ChakraImportOptions& options)
      : options_(options) {
    for (const std::string& device : devices) graph_.add_device(device);
    for (const std::string& path : files) ranks_.push_back(read_file(path, sink_));
    sink_.throw_if_any();
    dnnsim_written_ = std::all_of(ranks_.begin(), ranks_.end(), [](const RankFile& f) {
      return std::any_of(f.metadata.attr().begin(), f.metadata.attr().end(),
                         [](const auto& a) { return a.name() == "dnnsim.version"; });
    });
    // A dnnsim-written set names its streams in their original order.
    if (dnnsim_written_ && !ranks_.empty())
      for (const auto& attr : ranks_.front().metadata.attr())
        if (attr.name() == "dnnsim.streams" && attr.value_case() == pb::AttributeProto::kStringList)
          for (const std::string& stream : attr.string_list().values()) (void)graph_.stream(stream);
  }

  ChakraImport run() {
    index_nodes();
    sink_.throw_if_any();
    classify();
    sink_.throw_if_any();
    order();
    sink_.throw_if_any();
    build();
    sink_.throw_if_any();
    std::vector<Diagnostic> problems = graph_.validate();
    if (!problems.empty()) throw InputError(std::move(problems));
    return ChakraImport{std::move(graph_), std::move(warnings_)};
  }

 private:
  SourceLocation where(std::size_t rank, std::size_t node) const { return at(ranks_[rank].path, node + 1); }

  void index_nodes() {
    by_id_.resize(ranks_.size());
    refs_.resize(ranks_.size());
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      refs_[r].resize(ranks_[r].nodes.size());
      for (std::size_t i = 0; i < ranks_[r].nodes.size(); ++i)
        if (!by_id_[r].emplace(ranks_[r].nodes[i].id(), i).second)
          sink_.error(where(r, i), fmt::format("node id {} appears twice in the file", ranks_[r].nodes[i].id()));
    }
  }

  std::optional<std::int64_t> require_int(std::size_t r, std::size_t i, std::string_view name) {
    const pb::AttributeProto* attr = find_attr(ranks_[r].nodes[i], name);
    if (attr == nullptr) {
      sink_.error(where(r, i),
                  fmt::format("{} node '{}' has no '{}' attribute", pb::NodeType_Name(ranks_[r].nodes[i].type()),
                              ranks_[r].nodes[i].name(), name));
      return std::nullopt;
    }
    const auto value = int_value(*attr);
    if (!value) sink_.error(where(r, i), fmt::format("attribute '{}' must be an integer", name));
    return value;
  }

  std::optional<std::size_t> rank_attr(std::size_t r, std::size_t i, std::string_view name) {
    const auto value = require_int(r, i, name);
    if (!value) return std::nullopt;
    if (*value < 0 || static_cast<std::size_t>(*value) >= ranks_.size()) {
      sink_.error(where(r, i),
                  fmt::format("'{}' is rank {}, but the trace set has ranks 0–{}", name, *value, ranks_.size() - 1));
      return std::nullopt;
    }
    return static_cast<std::size_t>(*value);
  }

  void warn_unknown_attributes(std::size_t r, std::size_t i) {
    for (const pb::AttributeProto& attr : ranks_[r].nodes[i].attr()) {
      if (kKnownAttributes.count(attr.name()) > 0 || attr.name().rfind("dnnsim.", 0) == 0) continue;
      if (warned_.insert(attr.name()).second)
        warnings_.push_back(fmt::format("{}: attribute '{}' is not used by dnnsim (ignored; first seen here)",
                                        where(r, i).file, attr.name()));
    }
  }

  std::string string_attr(const pb::Node& node, std::string_view name, std::string fallback = "") const {
    const pb::AttributeProto* attr = find_attr(node, name);
    if (attr == nullptr) return fallback;
    if (attr->value_case() == pb::AttributeProto::kStringVal) return attr->string_val();
    if (auto i = int_value(*attr)) return std::to_string(*i);
    return fallback;
  }

  double number_attr(const pb::Node& node, std::string_view name, double fallback = 0) const {
    const pb::AttributeProto* attr = find_attr(node, name);
    const auto value = attr ? number_value(*attr) : std::nullopt;
    return value.value_or(fallback);
  }

  // Phase, stream, iteration and memory effects: dnnsim's own attributes, or the defaults.
  Task common_task(const pb::Node& node, std::string_view default_stream, Phase default_phase) {
    Task task;
    task.label = node.name();
    task.stream = graph_.stream(string_attr(node, "dnnsim.stream", std::string(default_stream)));
    task.phase = phase_from_name(string_attr(node, "dnnsim.phase")).value_or(default_phase);
    task.iteration = static_cast<std::uint32_t>(number_attr(node, "dnnsim.iteration"));
    task.alloc_bytes = Bytes(number_attr(node, "dnnsim.alloc_bytes"));
    task.free_bytes = Bytes(number_attr(node, "dnnsim.free_bytes"));
    return task;
  }

  Compute compute_of(std::size_t r, std::size_t i) {
    const pb::Node& node = ranks_[r].nodes[i];
    Compute compute;
    compute.device = static_cast<DeviceId>(r);
    const bool memory_only = node.type() == pb::MEM_LOAD_NODE || node.type() == pb::MEM_STORE_NODE;
    compute.flops = Flop(memory_only ? 0.0 : number_attr(node, "dnnsim.flops", number_attr(node, "num_ops")));
    compute.bytes_accessed = Bytes(number_attr(node, "dnnsim.bytes", number_attr(node, "tensor_size")));
    compute.dtype = dtype_from_name(string_attr(node, "dnnsim.dtype")).value_or(options_.dtype);
    compute.kernel = layer_kind_from_name(string_attr(node, "dnnsim.kernel")).value_or(LayerKind::other);
    const bool ours = std::any_of(node.attr().begin(), node.attr().end(),
                                  [](const auto& a) { return a.name().rfind("dnnsim.", 0) == 0; });
    if (ours) {
      if (const pb::AttributeProto* t = find_attr(node, "dnnsim.measured_time_s")) {
        compute.measured_time = Seconds(number_value(*t).value_or(0));
        compute.measured_on = string_attr(node, "dnnsim.measured_on");
      }
    } else if (node.duration_micros() > 0) {
      compute.measured_time = Seconds(static_cast<double>(node.duration_micros()) * 1e-6);
      compute.measured_on = !options_.recorded_on.empty()   ? options_.recorded_on
                            : r < options_.rank_gpus.size() ? options_.rank_gpus[r]
                                                            : "";
    }
    return compute;
  }

  std::size_t new_slot(Task task, std::size_t r, std::size_t i) {
    slots_.push_back(Slot{std::move(task), {{r, i}}, {}, 0, std::nullopt, ranks_[r].nodes[i].id()});
    return slots_.size() - 1;
  }

  void classify() {
    // Collectives: (group key, ordinal on the rank) → slot; group key → member ranks.
    std::map<std::string, std::set<std::size_t>> group_members;
    std::vector<std::map<std::string, std::size_t>> ordinal(ranks_.size());
    std::map<std::pair<std::string, std::size_t>, std::size_t> collective_slot;
    // Point to point: (src, dst, tag) → sends and receives in order.
    std::map<std::tuple<std::size_t, std::size_t, std::int64_t>, std::vector<std::pair<std::size_t, std::size_t>>>
        sends, recvs;
    std::vector<std::size_t> everyone(ranks_.size());
    for (std::size_t r = 0; r < ranks_.size(); ++r) everyone[r] = r;

    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      for (std::size_t i = 0; i < ranks_[r].nodes.size(); ++i) {
        const pb::Node& node = ranks_[r].nodes[i];
        warn_unknown_attributes(r, i);
        switch (node.type()) {
          case pb::COMP_NODE:
          case pb::MEM_LOAD_NODE:
          case pb::MEM_STORE_NODE: {
            Task task = common_task(node, "compute", Phase::other);
            task.op = compute_of(r, i);
            refs_[r][i] = NodeRef{Role::local, new_slot(std::move(task), r, i)};
            break;
          }
          case pb::METADATA_NODE:
            refs_[r][i] = NodeRef{Role::metadata, 0};
            break;
          case pb::COMM_COLL_NODE: {
            const auto type = require_int(r, i, "comm_type");
            const auto size = require_int(r, i, "comm_size");
            if (!type || !size) break;
            const auto kind = collective_of(*type);
            if (!kind) {
              sink_.error(where(r, i), fmt::format("collective type {} ({}) is not modelled; dnnsim models all-reduce, "
                                                   "all-gather, reduce-scatter, broadcast, all-to-all and barrier",
                                                   *type,
                                                   pb::CollectiveCommType_IsValid(static_cast<int>(*type))
                                                       ? pb::CollectiveCommType_Name(static_cast<int>(*type))
                                                       : "unknown"));
              break;
            }
            std::string key = string_attr(node, "pg_name");
            if (key.empty()) key = string_attr(node, "comm_group");
            const std::size_t k = ordinal[r][key]++;
            group_members[key].insert(r);
            auto [it, added] = collective_slot.try_emplace({key, k}, 0);
            if (added) {
              Task task = common_task(node, "comm", Phase::communication);
              Collective collective{
                  *kind, {}, Bytes(static_cast<double>(*size)), string_attr(node, "dnnsim.algorithm"), 0};
              if (*type == pb::BARRIER) collective.size = Bytes(0);
              if (const pb::AttributeProto* root = find_attr(node, "dnnsim.root"))
                collective.root = static_cast<DeviceId>(int_value(*root).value_or(0));
              if (const pb::AttributeProto* calls = find_attr(node, "dnnsim.calls")) {
                const std::optional<std::int64_t> count = int_value(*calls);
                if (count && *count >= 1 && *count <= std::numeric_limits<std::uint32_t>::max())
                  collective.calls = static_cast<std::uint32_t>(*count);
                else
                  sink_.error(where(r, i), "dnnsim.calls must be an integer in [1, 2^32 - 1]");
              }
              task.op = collective;
              it->second = new_slot(std::move(task), r, i);
            } else {
              Slot& slot = slots_[it->second];
              const auto& first = std::get<Collective>(slot.task.op);
              const auto& [r0, i0] = slot.nodes.front();
              if (first.kind != *kind || (first.size.value() != static_cast<double>(*size) && *type != pb::BARRIER))
                sink_.error(
                    where(r, i),
                    fmt::format("collective #{} of group '{}' is {} of {} bytes here but {} of {} bytes on rank "
                                "{} ({}: message {})",
                                k, key, collective_kind_name(*kind), *size, collective_kind_name(first.kind),
                                first.size.value(), r0, ranks_[r0].path, i0 + 1));
              slot.nodes.emplace_back(r, i);
            }
            refs_[r][i] = NodeRef{Role::collective, it->second};
            break;
          }
          case pb::COMM_SEND_NODE: {
            const auto dst = rank_attr(r, i, "comm_dst");
            const auto size = require_int(r, i, "comm_size");
            if (!dst || !size) break;
            const std::int64_t tag = find_attr(node, "comm_tag") ? require_int(r, i, "comm_tag").value_or(0) : 0;
            if (*dst == r) {
              sink_.error(where(r, i), "a send to its own rank");
              break;
            }
            Task task = common_task(node, "p2p", Phase::communication);
            task.op =
                Transfer{static_cast<DeviceId>(r), static_cast<DeviceId>(*dst), Bytes(static_cast<double>(*size))};
            refs_[r][i] = NodeRef{Role::send, new_slot(std::move(task), r, i)};
            sends[{r, *dst, tag}].emplace_back(r, i);
            break;
          }
          case pb::COMM_RECV_NODE: {
            const auto src = rank_attr(r, i, "comm_src");
            if (!src) break;
            const std::int64_t tag = find_attr(node, "comm_tag") ? require_int(r, i, "comm_tag").value_or(0) : 0;
            recvs[{*src, r, tag}].emplace_back(r, i);
            refs_[r][i] = NodeRef{Role::recv, 0};
            break;
          }
          default:
            sink_.error(where(r, i),
                        fmt::format("node '{}' has type {} ({}), which is not an operation", node.name(),
                                    static_cast<int>(node.type()),
                                    pb::NodeType_IsValid(node.type()) ? pb::NodeType_Name(node.type()) : "unknown"));
        }
      }
    }
    // The k-th collective of a group involves every rank holding that group's collectives; all ranks
    // when the nodes name no group.
    for (auto& [key_k, slot] : collective_slot) {
      const auto& members =
          key_k.first.empty() ? std::set<std::size_t>(everyone.begin(), everyone.end()) : group_members[key_k.first];
      Slot& s = slots_[slot];
      s.members = members;
      auto& collective = std::get<Collective>(s.task.op);
      if (const pb::AttributeProto* order =
              find_attr(ranks_[s.nodes[0].first].nodes[s.nodes[0].second], "dnnsim.group");
          order != nullptr && order->value_case() == pb::AttributeProto::kInt64List) {
        for (std::int64_t m : order->int64_list().values()) collective.group.push_back(static_cast<DeviceId>(m));
      } else {
        for (std::size_t m : members) collective.group.push_back(static_cast<DeviceId>(m));
      }
      if (s.nodes.size() != members.size()) {
        std::set<std::size_t> present;
        for (const auto& [r, i] : s.nodes) present.insert(r);
        std::vector<std::size_t> missing;
        std::set_difference(members.begin(), members.end(), present.begin(), present.end(),
                            std::back_inserter(missing));
        const auto& [r0, i0] = s.nodes.front();
        sink_.error(where(r0, i0), fmt::format("collective #{} of group '{}' ('{}') has no counterpart on rank{} {}",
                                               key_k.second, key_k.first.empty() ? "all ranks" : key_k.first,
                                               s.task.label, missing.size() == 1 ? "" : "s", fmt::join(missing, ", ")));
      }
    }
    // The k-th receive from src with a tag matches the k-th send to it with that tag.
    for (const auto& [key, receives] : recvs) {
      const auto it = sends.find(key);
      const std::size_t matched = it == sends.end() ? 0 : std::min(it->second.size(), receives.size());
      for (std::size_t k = 0; k < receives.size(); ++k) {
        const auto& [r, i] = receives[k];
        if (k >= matched) {
          sink_.error(where(r, i), fmt::format("receive from rank {} with tag {} has no matching send",
                                               std::get<0>(key), std::get<2>(key)));
          continue;
        }
        const auto& [sr, si] = it->second[k];
        refs_[r][i].slot = refs_[sr][si].slot;
        slots_[refs_[sr][si].slot].nodes.emplace_back(r, i);
      }
    }
    for (const auto& [key, list] : sends) {
      const auto it = recvs.find(key);
      for (std::size_t k = it == recvs.end() ? 0 : it->second.size(); k < list.size(); ++k)
        sink_.error(
            where(list[k].first, list[k].second),
            fmt::format("send to rank {} with tag {} has no matching receive", std::get<1>(key), std::get<2>(key)));
    }
  }

  // TaskIds in an order every stream accepts: each rank's nodes in file order, a collective once
  // all its members have reached it. A dnnsim-written set keeps its original task numbering.
  void order() {
    if (dnnsim_written_) {
      std::vector<std::size_t> by_id(slots_.size());
      for (std::size_t s = 0; s < slots_.size(); ++s) by_id[s] = s;
      std::stable_sort(by_id.begin(), by_id.end(),
                       [&](std::size_t a, std::size_t b) { return slots_[a].exported_id < slots_[b].exported_id; });
      for (std::size_t s : by_id) emit(s);
      return;
    }
    std::vector<std::size_t> cursor(ranks_.size(), 0);
    std::vector<bool> waiting(ranks_.size(), false);
    for (bool progress = true; progress;) {
      progress = false;
      for (std::size_t r = 0; r < ranks_.size(); ++r) {
        while (cursor[r] < ranks_[r].nodes.size()) {
          const NodeRef& ref = refs_[r][cursor[r]];
          if (ref.role == Role::collective && !slots_[ref.slot].id) {
            Slot& slot = slots_[ref.slot];
            if (!waiting[r]) {
              waiting[r] = true;
              ++slot.arrived;
            }
            if (slot.arrived < slot.members.size()) break;
            emit(ref.slot);
          }
          if (ref.role == Role::local || ref.role == Role::send) emit(ref.slot);
          waiting[r] = false;
          ++cursor[r];
          progress = true;
        }
      }
    }
    for (std::size_t r = 0; r < ranks_.size(); ++r)
      if (cursor[r] < ranks_[r].nodes.size())
        sink_.error(where(r, cursor[r]),
                    fmt::format("collective '{}' waits forever: its members reach their collectives in different "
                                "orders (a deadlock under NCCL too)",
                                ranks_[r].nodes[cursor[r]].name()));
  }

  void emit(std::size_t slot) {
    if (slots_[slot].id) return;
    slots_[slot].id = static_cast<TaskId>(emitted_.size());
    emitted_.push_back(slot);
  }

  // Task ids a node's dependency stands for: its task, or through a metadata node its dependencies.
  void resolve(std::size_t r, std::size_t i, std::set<TaskId>& out, std::set<std::size_t>& seen) {
    if (!seen.insert(i).second) return;
    const NodeRef& ref = refs_[r][i];
    if (ref.role != Role::metadata) {
      if (slots_[ref.slot].id) out.insert(*slots_[ref.slot].id);
      return;
    }
    for (const auto* deps : {&ranks_[r].nodes[i].data_deps(), &ranks_[r].nodes[i].ctrl_deps()})
      for (std::uint64_t dep : *deps)
        if (auto it = by_id_[r].find(dep); it != by_id_[r].end()) resolve(r, it->second, out, seen);
  }

  void build() {
    for (std::size_t s : emitted_) {
      Slot& slot = slots_[s];
      std::set<TaskId> deps;
      for (const auto& [r, i] : slot.nodes) {
        const pb::Node& node = ranks_[r].nodes[i];
        for (const auto* list : {&node.data_deps(), &node.ctrl_deps()}) {
          for (std::uint64_t dep : *list) {
            const auto it = by_id_[r].find(dep);
            if (it == by_id_[r].end()) {
              sink_.error(where(r, i),
                          fmt::format("node '{}' depends on node id {}, which is not in the file", node.name(), dep));
              continue;
            }
            std::set<std::size_t> seen;
            resolve(r, it->second, deps, seen);
          }
        }
      }
      deps.erase(*slot.id);
      slot.task.deps.assign(deps.begin(), deps.end());
      const auto& [r0, i0] = slot.nodes.front();
      graph_.add(std::move(slot.task), where(r0, i0));
    }
  }

  ChakraImportOptions options_;
  DiagnosticSink sink_;
  std::vector<RankFile> ranks_;
  bool dnnsim_written_ = false;
  std::vector<std::map<std::uint64_t, std::size_t>> by_id_;  // per rank: node id → node index
  std::vector<std::vector<NodeRef>> refs_;
  std::vector<Slot> slots_;
  std::vector<std::size_t> emitted_;  // slots in TaskId order
  std::set<std::string> warned_;
  std::vector<std::string> warnings_;
  TaskGraph graph_;
};

}  // namespace

ChakraImport import_chakra(const std::vector<std::string>& files, const std::vector<std::string>& devices,
                           const ChakraImportOptions& options) {
  if (files.size() != devices.size())
    throw std::invalid_argument("import_chakra: one device per trace file");  // the caller maps ranks first
  return Importer(files, devices, options).run();
}

std::vector<std::string> expand_rank_pattern(const std::string& pattern, std::size_t count) {
  std::vector<std::string> files;
  const auto at = pattern.find("%d");
  for (std::size_t r = 0; r < count; ++r)
    files.push_back(at == std::string::npos ? pattern
                                            : pattern.substr(0, at) + std::to_string(r) + pattern.substr(at + 2));
  return files;
}

}  // namespace dnnsim
