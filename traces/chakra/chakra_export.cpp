// Writes a TaskGraph as MLCommons Chakra execution traces, one file per rank (see chakra_trace.hpp;
// reading is chakra_trace.cpp).
#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "chakra/schema/et_def.pb.h"  // generated from traces/chakra/schema/et_def.proto
#include "traces/chakra/chakra_trace.hpp"

namespace dnnsim {
namespace {

namespace pb = ChakraProtoMsg;

constexpr std::string_view kExporterVersion = "dnnsim-1";  // GlobalMetadata attribute "dnnsim.version"

pb::AttributeProto* add_attr(pb::Node& node, const std::string& name) {
  pb::AttributeProto* attr = node.add_attr();
  attr->set_name(name);
  return attr;
}

void write_delimited(std::ostream& out, const google::protobuf::MessageLite& message) {
  google::protobuf::io::OstreamOutputStream raw(&out);
  google::protobuf::io::CodedOutputStream coded(&raw);
  coded.WriteVarint32(static_cast<std::uint32_t>(message.ByteSizeLong()));
  message.SerializeWithCachedSizes(&coded);
}

// The ranks whose files hold a node of the task: the compute's device, the transfer's source and
// destination, the collective's members.
std::vector<DeviceId> ranks_of(const Task& task) {
  if (const auto* t = std::get_if<Transfer>(&task.op)) return {t->src, t->dst};
  return task.devices();
}

bool involves(const Task& task, DeviceId rank) {
  const auto on = ranks_of(task);
  return std::find(on.begin(), on.end(), rank) != on.end();
}

std::int64_t collective_type(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_reduce:
      return pb::ALL_REDUCE;
    case CollectiveKind::all_gather:
      return pb::ALL_GATHER;
    case CollectiveKind::reduce_scatter:
      return pb::REDUCE_SCATTER;
    case CollectiveKind::broadcast:
      return pb::BROADCAST;
    case CollectiveKind::all_to_all:
      return pb::ALL_TO_ALL;
  }
  return pb::ALL_REDUCE;
}

}  // namespace

ChakraExport export_chakra(const TaskGraph& graph, const std::string& dir,
                           const std::function<std::optional<Seconds>(const Task&)>& duration) {
  ChakraExport exported;
  std::filesystem::create_directories(dir);
  const std::size_t ranks = graph.devices().size();
  std::vector<std::vector<pb::Node>> nodes(ranks);
  // Groups other than "every rank" get a name per distinct member list, in order of appearance.
  std::map<std::vector<DeviceId>, std::string> group_names;
  for (TaskId id = 0; id < graph.tasks().size(); ++id) {
    const Task& task = graph.task(id);
    const auto on = ranks_of(task);
    for (TaskId dep : task.deps)
      if (std::none_of(on.begin(), on.end(), [&](DeviceId d) { return involves(graph.task(dep), d); }))
        ++exported.dropped_dependencies;
    const auto common = [&](pb::Node& node, pb::NodeType type) {
      node.set_id(id);
      node.set_name(task.label);
      node.set_type(type);
      add_attr(node, "is_cpu_op")->set_bool_val(false);
      add_attr(node, "dnnsim.phase")->set_string_val(std::string(phase_name(task.phase)));
      add_attr(node, "dnnsim.stream")->set_string_val(graph.streams().at(task.stream));
      if (task.iteration > 0) add_attr(node, "dnnsim.iteration")->set_int64_val(task.iteration);
      if (task.alloc_bytes.value() > 0) add_attr(node, "dnnsim.alloc_bytes")->set_double_val(task.alloc_bytes.value());
      if (task.free_bytes.value() > 0) add_attr(node, "dnnsim.free_bytes")->set_double_val(task.free_bytes.value());
    };
    // A node's dependencies: those of the task's dependencies that have a node in this rank's file.
    const auto local_deps = [&](pb::Node& node, DeviceId rank, const std::function<bool(const Task&)>& keep) {
      for (TaskId dep : task.deps)
        if (involves(graph.task(dep), rank) && keep(graph.task(dep))) node.add_data_deps(dep);
    };
    const auto all = [](const Task&) { return true; };
    if (const auto* compute = std::get_if<Compute>(&task.op)) {
      pb::Node& node = nodes[compute->device].emplace_back();
      common(node, pb::COMP_NODE);
      add_attr(node, "num_ops")->set_int64_val(static_cast<std::int64_t>(std::llround(compute->flops.value())));
      add_attr(node, "tensor_size")
          ->set_uint64_val(static_cast<std::uint64_t>(std::llround(compute->bytes_accessed.value())));
      add_attr(node, "dnnsim.flops")->set_double_val(compute->flops.value());
      add_attr(node, "dnnsim.bytes")->set_double_val(compute->bytes_accessed.value());
      add_attr(node, "dnnsim.dtype")->set_string_val(std::string(dtype_name(compute->dtype)));
      add_attr(node, "dnnsim.kernel")->set_string_val(std::string(layer_kind_name(compute->kernel)));
      if (compute->measured_time) {
        add_attr(node, "dnnsim.measured_time_s")->set_double_val(compute->measured_time->value());
        add_attr(node, "dnnsim.measured_on")->set_string_val(compute->measured_on);
      }
      const std::optional<Seconds> time = duration ? duration(task) : compute->measured_time;
      if (time) node.set_duration_micros(static_cast<std::uint64_t>(std::llround(time->value() * 1e6)));
      local_deps(node, compute->device, all);
    } else if (const auto* transfer = std::get_if<Transfer>(&task.op)) {
      // The sender's node waits for what involves the sender, the receiver's for the rest.
      pb::Node& send = nodes[transfer->src].emplace_back();
      common(send, pb::COMM_SEND_NODE);
      add_attr(send, "comm_dst")->set_int64_val(transfer->dst);
      add_attr(send, "comm_size")->set_int64_val(static_cast<std::int64_t>(std::llround(transfer->size.value())));
      add_attr(send, "comm_tag")->set_int64_val(id);
      local_deps(send, transfer->src, all);
      pb::Node& recv = nodes[transfer->dst].emplace_back();
      common(recv, pb::COMM_RECV_NODE);
      add_attr(recv, "comm_src")->set_int64_val(transfer->src);
      add_attr(recv, "comm_size")->set_int64_val(static_cast<std::int64_t>(std::llround(transfer->size.value())));
      add_attr(recv, "comm_tag")->set_int64_val(id);
      local_deps(recv, transfer->dst, [&](const Task& dep) { return !involves(dep, transfer->src); });
    } else {
      const auto& collective = std::get<Collective>(task.op);
      std::vector<DeviceId> sorted = collective.group;
      std::sort(sorted.begin(), sorted.end());
      std::string group;
      if (sorted.size() != ranks)
        group = group_names.try_emplace(sorted, fmt::format("dnnsim.group{}", group_names.size())).first->second;
      for (DeviceId rank : collective.group) {
        pb::Node& node = nodes[rank].emplace_back();
        common(node, pb::COMM_COLL_NODE);
        add_attr(node, "comm_type")->set_int64_val(collective_type(collective.kind));
        add_attr(node, "comm_size")->set_int64_val(static_cast<std::int64_t>(std::llround(collective.size.value())));
        if (!group.empty()) add_attr(node, "pg_name")->set_string_val(group);
        if (sorted != collective.group) {
          auto* order = add_attr(node, "dnnsim.group")->mutable_int64_list();
          for (DeviceId m : collective.group) order->add_values(m);
        }
        if (!collective.algorithm.empty()) add_attr(node, "dnnsim.algorithm")->set_string_val(collective.algorithm);
        if (collective.kind == CollectiveKind::broadcast) add_attr(node, "dnnsim.root")->set_int64_val(collective.root);
        if (collective.calls != 1) add_attr(node, "dnnsim.calls")->set_int64_val(collective.calls);
        local_deps(node, rank, all);
      }
    }
  }
  for (std::size_t r = 0; r < ranks; ++r) {
    const std::string path = (std::filesystem::path(dir) / fmt::format("trace.{}.et", r)).string();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    pb::GlobalMetadata metadata;
    metadata.set_version("0.0.4");
    auto* schema = metadata.add_attr();
    schema->set_name("schema");
    schema->set_string_val("1.0.2-chakra.1.0.0");
    auto* version = metadata.add_attr();
    version->set_name("dnnsim.version");
    version->set_string_val(std::string(kExporterVersion));
    auto* device = metadata.add_attr();
    device->set_name("dnnsim.device");
    device->set_string_val(graph.devices()[r]);
    auto* streams = metadata.add_attr();
    streams->set_name("dnnsim.streams");
    for (const std::string& stream : graph.streams()) streams->mutable_string_list()->add_values(stream);
    write_delimited(out, metadata);
    for (const pb::Node& node : nodes[r]) write_delimited(out, node);
    out.flush();
    if (!out) throw InputError(SourceLocation{path, 0, 0}, "cannot write the file");
    exported.files.push_back(path);
  }
  return exported;
}

}  // namespace dnnsim
