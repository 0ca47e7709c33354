// Chakra ET fixtures written the way users make them. `write_text_workload` follows the documented
// workload text format of Chakra's text-to-ET converter (mlcommons/chakra src/converter/
// text_converter.py, the files ASTRA-sim's examples ship): line 1 the parallelism (DATA, MODEL,
// HYBRID_DATA_MODEL), line 2 the layer count, then one line per layer
//   name  reserved  fwd_time  fwd_comm_type  fwd_comm_size  ig_time  ig_comm_type  ig_comm_size
//   wg_time  wg_comm_type  wg_comm_size  update_time
// (times in µs, sizes in bytes, comm types ALLREDUCE/ALLGATHER/REDUCESCATTER/ALLTOALL/NONE), and the
// node structure that converter gives each parallelism, one file per rank ("prefix.<rank>.et"). This
// is our own generator, written from that description; `EtFile` builds hand-written traces.
#pragma once

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "chakra/schema/et_def.pb.h"

namespace dnnsim::testing {

namespace pb = ChakraProtoMsg;

inline void write_delimited(std::ostream& out, const google::protobuf::MessageLite& message) {
  google::protobuf::io::OstreamOutputStream raw(&out);
  google::protobuf::io::CodedOutputStream coded(&raw);
  coded.WriteVarint32(static_cast<std::uint32_t>(message.ByteSizeLong()));
  message.SerializeWithCachedSizes(&coded);
}

// One rank's trace, node by node.
struct EtFile {
  std::vector<pb::Node> nodes;
  pb::Node& add(const std::string& name, pb::NodeType type, std::vector<std::uint64_t> deps = {}) {
    pb::Node& node = nodes.emplace_back();
    node.set_id(nodes.size() - 1);
    node.set_name(name);
    node.set_type(type);
    for (auto d : deps) node.add_data_deps(d);
    return node;
  }
  static void attr(pb::Node& node, const std::string& name, std::int64_t value) {
    auto* a = node.add_attr();
    a->set_name(name);
    a->set_int64_val(value);
  }
  void save(const std::string& path) const {
    std::ofstream out(path, std::ios::binary);
    pb::GlobalMetadata metadata;
    metadata.set_version("0.0.4");
    write_delimited(out, metadata);
    for (const auto& node : nodes) write_delimited(out, node);
  }
};

inline std::int64_t text_comm_type(const std::string& type) {
  if (type == "ALLGATHER") return pb::ALL_GATHER;
  if (type == "REDUCESCATTER") return pb::REDUCE_SCATTER;
  if (type == "ALLTOALL") return pb::ALL_TO_ALL;
  return pb::ALL_REDUCE;  // ALLREDUCE, and what the converter does with anything else
}

// Writes prefix.<rank>.et for ranks 0…ranks−1 from a workload text (one pass).
inline void write_text_workload(const std::string& text, const std::string& prefix, int ranks) {
  struct Layer {
    std::string name, fwd_type, ig_type, wg_type;
    std::int64_t fwd, fwd_size, ig, ig_size, wg, wg_size;
  };
  std::istringstream in(text);
  std::string parallelism;
  int count = 0;
  in >> parallelism >> count;
  std::vector<Layer> layers(static_cast<std::size_t>(count));
  std::string reserved, update;
  for (Layer& l : layers)
    in >> l.name >> reserved >> l.fwd >> l.fwd_type >> l.fwd_size >> l.ig >> l.ig_type >> l.ig_size >> l.wg >>
        l.wg_type >> l.wg_size >> update;
  for (int rank = 0; rank < ranks; ++rank) {
    EtFile et;
    const auto comp = [&](const Layer& l, const std::string& phase, std::int64_t micros,
                          std::vector<std::uint64_t> deps) {
      pb::Node& node = et.add("COMP_NODE_" + l.name + "_" + phase, pb::COMP_NODE, std::move(deps));
      node.set_duration_micros(static_cast<std::uint64_t>(micros));
      return node.id();
    };
    const auto comm = [&](const std::string& name, const std::string& type, std::int64_t size, std::uint64_t dep) {
      pb::Node& node = et.add("COMM_COLL_NODE_" + name + "_" + type, pb::COMM_COLL_NODE, {dep});
      EtFile::attr(node, "comm_type", text_comm_type(type));
      EtFile::attr(node, "comm_size", size);
      return node.id();
    };
    const std::size_t n = layers.size();
    std::vector<std::uint64_t> fwd(n), fwd_comm(n), ig(n), ig_comm(n), wg(n);
    std::vector<bool> has_ig_comm(n, false);
    if (parallelism == "DATA") {
      for (std::size_t i = 0; i < n; ++i)
        fwd[i] = comp(layers[i], "FWD", layers[i].fwd, i ? std::vector{fwd[i - 1]} : std::vector<std::uint64_t>{});
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = n - 1 - k;
        wg[i] = comp(layers[i], "BWD_WG", layers[i].wg, {k == 0 ? fwd[n - 1] : ig[i + 1]});
        comm(layers[i].name, layers[i].wg_type, layers[i].wg_size, wg[i]);
        if (k != n - 1) ig[i] = comp(layers[i], "BWD_IG", layers[i].ig, {wg[i]});
      }
    } else if (parallelism == "MODEL" || parallelism == "HYBRID_DATA_MODEL") {
      const bool hybrid = parallelism == "HYBRID_DATA_MODEL";
      for (std::size_t i = 0; i < n; ++i) {
        fwd[i] = comp(layers[i], "FWD", layers[i].fwd, i ? std::vector{fwd_comm[i - 1]} : std::vector<std::uint64_t>{});
        fwd_comm[i] = comm(layers[i].name, layers[i].fwd_type, layers[i].fwd_size, fwd[i]);
      }
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = n - 1 - k;
        std::vector<std::uint64_t> deps{fwd_comm[n - 1]};
        if (k != 0) deps = has_ig_comm[i + 1] ? std::vector{wg[i + 1], ig_comm[i + 1]} : std::vector{wg[i + 1]};
        ig[i] = comp(layers[i], "BWD_IG", layers[i].ig, deps);
        if (k != n - 1) {
          ig_comm[i] = comm(layers[i].name + (hybrid ? "_IG_COMM_" : ""), layers[i].ig_type, layers[i].ig_size, ig[i]);
          has_ig_comm[i] = true;
        }
        wg[i] = comp(layers[i], "BWD_WG", layers[i].wg, {ig[i]});
        if (hybrid) comm(layers[i].name, layers[i].wg_type, layers[i].wg_size, wg[i]);
      }
    } else {
      throw std::invalid_argument("write_text_workload: unsupported parallelism " + parallelism);
    }
    et.save(prefix + "." + std::to_string(rank) + ".et");
  }
}

}  // namespace dnnsim::testing
