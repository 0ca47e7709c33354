#include "sim/scenario/workload_reading.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "models/common/option_reader.hpp"
#include "models/dnn/profile_graph.hpp"
#include "models/dnn/saved_activations.hpp"
#include "models/dnn/zoo.hpp"
#include "models/dnn/zoo_llm.hpp"
#include "models/hardware/catalog.hpp"
#include "models/program/collective_algorithms.hpp"

namespace dnnsim {

std::string resolve_scenario_path(const std::string& scenario_file, const std::string& path) {
  const std::filesystem::path p(path);
  if (p.is_absolute()) return path;
  return (std::filesystem::path(scenario_file).parent_path() / p).lexically_normal().string();
}

namespace {

// `weight_layout: in_out | out_in` of a generated model, whose layers have GEMM shapes (default in_out).
WeightLayout read_weight_layout(MapReader& map) {
  const auto layout = map.choice("weight_layout", "weight layout", weight_layout_names());
  return layout ? *weight_layout_from_name(*layout) : WeightLayout::in_out;
}

// `{zoo: NAME, seq: N, image: N}`: a generated model of the zoo (models/dnn/zoo.hpp).
LayerModel read_zoo_model(MapReader& map) {
  const ModelRegistry& zoo = builtin_models();
  const auto name = map.choice("zoo", "model", zoo.names());
  ModelOptions options;
  options.seq = static_cast<int>(map.integer("seq", 1, 1 << 24).value_or(0));
  options.image = static_cast<int>(map.integer("image", 1, 1 << 16).value_or(0));
  options.mtp_layers = static_cast<int>(map.integer("mtp", 0, 16).value_or(-1));
  const YAML::Node where = map.get("zoo");
  map.finish();
  if (!name) return LayerModel{};
  try {
    return zoo.at(*name).value(options);
  } catch (const InputError& e) {
    for (const Diagnostic& d : e.diagnostics()) map.reader().error(where, d.message);
  }
  return LayerModel{};
}

// `{transformer: {layers, hidden, heads, seq, vocab, ffn}, name}`: a GPT-like decoder-only stack
// built as the zoo builds its transformers (models/dnn/zoo.hpp), for the sizes papers train that the
// zoo does not name (Narayanan et al. SC'21 Table 1).
LayerModel read_transformer_model(MapReader& map) {
  YamlReader& reader = map.reader();
  TransformerConfig config;
  config.name = map.string("name").value_or("transformer");
  const YAML::Node where = map.get("transformer");
  MapReader t(reader, where, "the transformer");
  map.finish();
  if (!t.valid()) return LayerModel{};
  const std::size_t before = reader.sink().size();
  config.layers = static_cast<int>(t.integer("layers", 1, 1 << 20, true).value_or(1));
  const auto hidden = t.integer("hidden", 1, 1 << 24, true);
  const auto heads = t.integer("heads", 1, 1 << 20, true);
  config.seq = static_cast<int>(t.integer("seq", 1, 1 << 24, true).value_or(1));
  config.vocab = static_cast<int>(t.integer("vocab", 0, 1 << 30).value_or(0));
  config.ffn = static_cast<int>(t.integer("ffn", 1, 1 << 26).value_or(0));
  // Checked only between two sizes that were read: a bad or missing one is reported at its key already.
  if (hidden && heads && *hidden % *heads != 0)
    reader.error(t.get("heads"), fmt::format("hidden {} is not a multiple of heads {}", *hidden, *heads));
  t.finish();
  if (reader.sink().size() != before) return LayerModel{};
  config.hidden = static_cast<int>(*hidden);
  config.heads = static_cast<int>(*heads);
  return transformer_model(config, ModelOptions{});
}

// `{llm: {layers, hidden, heads, kv_heads, ffn, …}, name}`: an LLM the zoo does not name, built by the
// zoo's own LLM generator (models/dnn/zoo_llm.hpp): grouped-query attention, a gated or plain MLP, and
// optionally a mixture of experts and sliding windows, so that the LLM keys (expert and context
// parallelism, FP8 recipes, recomputation modules) and the LLM layout planner apply to it as to the
// zoo's own. Multi-head latent attention and multi-token prediction stay the zoo's (DeepSeek-V3).
LayerModel read_llm_model(MapReader& map) {
  YamlReader& reader = map.reader();
  LlmConfig c;
  c.name = map.string("name").value_or("llm");
  const YAML::Node where = map.get("llm");
  MapReader t(reader, where, "the LLM");
  map.finish();
  if (!t.valid()) return LayerModel{};
  const std::size_t before = reader.sink().size();
  const auto int_key = [&t](std::string_view key, std::int64_t min, std::int64_t max, bool required = false) {
    return static_cast<int>(t.integer(key, min, max, required).value_or(0));
  };
  c.layers = int_key("layers", 1, 1 << 20, true);
  c.hidden = int_key("hidden", 1, 1 << 24, true);
  c.heads = int_key("heads", 1, 1 << 20, true);
  c.kv_heads = int_key("kv_heads", 1, 1 << 20);
  c.head_dim = int_key("head_dim", 1, 1 << 20);
  c.ffn = int_key("ffn", 1, 1 << 26);
  // Megatron-Core's activations: SwiGLU (Llama, Qwen, DeepSeek), GEGLU, and the plain GELU MLP of GPT.
  const std::string mlp = t.choice("mlp", "MLP activation", {"swiglu", "geglu", "gelu"}).value_or("swiglu");
  c.gated = mlp != "gelu";
  c.silu = mlp == "swiglu";
  c.bias = t.boolean("bias").value_or(false);
  c.vocab = int_key("vocab", 1, 1 << 30, true);
  c.seq = int_key("seq", 1, 1 << 24, true);
  c.experts = int_key("experts", 1, 1 << 16);
  c.top_k = int_key("top_k", 1, 1 << 16);
  c.expert_ffn = int_key("expert_ffn", 1, 1 << 26);
  c.shared_ffn = int_key("shared_ffn", 1, 1 << 26);
  c.dense_layers = int_key("dense_layers", 0, 1 << 20);
  c.window = int_key("window", 1, 1 << 24);
  c.window_every = int_key("window_every", 1, 1 << 20);
  const auto check = [&](bool ok, std::string_view key, const std::string& message) {
    if (!ok) reader.error(t.has(key) ? t.get(key) : where, message);
  };
  if (c.kv_heads == 0) c.kv_heads = c.heads;  // multi-head attention unless grouped
  // A missing or bad `heads` is reported already and read as 0: nothing to divide then.
  check(c.kv_heads == 0 || c.heads % c.kv_heads == 0, "kv_heads",
        fmt::format("kv_heads {} must divide heads {} (each key/value head serves a group of query heads)", c.kv_heads,
                    c.heads));
  if (c.head_dim == 0 && c.heads > 0) {
    check(c.hidden % c.heads == 0, "heads",
          fmt::format("hidden {} is not a multiple of heads {}; give head_dim", c.hidden, c.heads));
    c.head_dim = c.hidden / c.heads;
  }
  const bool moe = c.experts > 0;
  // A refused `experts` leaves it unknown whether the model is a mixture, and a refused `ffn` is said
  // already: neither is judged again as absent.
  const bool experts_read = !t.refused("experts");
  for (const char* key : {"top_k", "expert_ffn", "shared_ffn", "dense_layers"})
    check(moe || !t.has(key) || !experts_read, key, fmt::format("{} needs experts (a mixture-of-experts model)", key));
  if (moe) {
    // A misspelt top_k or expert_ffn is said at the misspelling.
    check(t.has("top_k") || t.refused("top_k"), "experts", "a mixture of experts needs top_k (experts per token)");
    check(t.has("expert_ffn") || t.refused("expert_ffn"), "experts",
          "a mixture of experts needs expert_ffn (each expert's hidden size)");
    check(c.top_k <= c.experts, "top_k", fmt::format("top_k {} exceeds the {} experts", c.top_k, c.experts));
    check(c.dense_layers <= c.layers, "dense_layers",
          fmt::format("dense_layers {} exceeds the {} layers", c.dense_layers, c.layers));
  }
  check(c.ffn > 0 || (moe && c.dense_layers == 0) || !experts_read || t.refused("ffn"), "ffn",
        moe ? "dense_layers need ffn (the dense MLP's hidden size)" : "a dense LLM needs ffn (the MLP's hidden size)");
  check((c.window > 0) == (c.window_every > 0), c.window > 0 ? "window" : "window_every",
        "window and window_every go together (a sliding window of `window` keys on one block in `window_every`)");
  t.finish();
  if (reader.sink().size() != before) return LayerModel{};
  try {
    return llm_model(c, ModelOptions{});
  } catch (const InputError& e) {
    for (const Diagnostic& d : e.diagnostics()) reader.error(where, d.message);
  }
  return LayerModel{};
}

}  // namespace

LayerModel read_layer_model(YamlReader& reader, const YAML::Node& node, const std::string& context) {
  LayerModel model;
  MapReader map(reader, node, context);
  if (!map.valid()) return model;
  if (auto file = map.string("file")) {
    map.finish();
    const std::string path = resolve_scenario_path(reader.file(), *file);
    YamlReader file_reader(path, reader.sink());
    YAML::Node root = file_reader.load_file();
    if (!root.IsDefined()) return model;
    return read_layer_model(file_reader, root, "a model file");
  }
  if (map.has("zoo") || map.has("transformer") || map.has("llm")) {
    // Generated models have GEMM shapes, which the weights' layout assigns to a calibration's grids.
    // The generator's layout (the LLM zoo's is PyTorch's out_in) unless the scenario says.
    const bool layout_given = map.has("weight_layout");
    const WeightLayout layout = read_weight_layout(map);
    model = map.has("zoo") ? read_zoo_model(map) : map.has("llm") ? read_llm_model(map) : read_transformer_model(map);
    if (layout_given || !model.transformer) model.weight_layout = layout;
    return model;
  }
  const HardwareCatalog& catalog = HardwareCatalog::builtin();
  if (map.has("profile")) {
    // A PipeDream/DAPPLE profile graph: measured per-layer times (models/dnn/profile_graph.hpp).
    const auto path = map.string("profile");
    const std::string measured_on = map.choice("measured_on", "GPU model", catalog.gpu_names()).value_or("V100-16GB");
    const auto batch = static_cast<int>(map.integer("measured_batch", 1, 1 << 20).value_or(0));
    // `saved_activations: {zoo: NAME, seq: N}`: the profile's layers with one block's parameters of
    // that zoo transformer are its blocks, and keep Korthikanti's count (models/dnn/saved_activations.hpp).
    const YAML::Node saved = map.get("saved_activations");
    LayerModel zoo;
    if (saved.IsDefined()) {
      MapReader zoo_map(reader, saved, "saved_activations");
      if (zoo_map.valid()) {
        if (!zoo_map.has("zoo") && !zoo_map.refused("zoo"))  // a misspelt zoo is said at the misspelling
          reader.error(saved, "saved_activations needs 'zoo' (a transformer of `dnnsim list models`)");
        zoo = read_zoo_model(zoo_map);  // reports its unknown keys; no layers without a zoo name
      }
    }
    map.finish();
    // A refused measured_batch is said: the profile is not also read without one ("no micro-batch size").
    if (!path || map.refused("measured_batch")) return model;
    try {
      model = load_profile_graph(resolve_scenario_path(reader.file(), *path), measured_on, batch);
    } catch (const InputError& e) {
      reader.sink().append(e.diagnostics());
      return model;
    }
    if (!zoo.layers.empty()) {
      try {
        (void)declare_zoo_blocks(model, zoo);
      } catch (const InputError& e) {
        for (const Diagnostic& d : e.diagnostics()) reader.error(saved, d.message);
      }
    }
    return model;
  }
  model.name = map.string("name").value_or("model");
  model.measured_on = map.choice("measured_on", catalog.gpu_names()).value_or("");
  model.measured_batch = static_cast<int>(map.integer("measured_batch", 1, 1 << 20).value_or(1));
  // `file`, `zoo`, `transformer`, `llm` and `profile` each say what the other keys mean: after a
  // misspelling of one, the layer list's "missing key 'layers'" would be a second error for one mistake.
  for (const char* kind : {"file", "zoo", "transformer", "llm", "profile"})
    if (map.misspelt(kind)) {
      map.declare_all_but_misspellings_of(kind);
      map.finish();
      return model;
    }
  YAML::Node layers = map.require("layers");
  const auto entries = layers.IsDefined() ? reader.list(layers, "layers") : std::vector<YAML::Node>{};
  if (layers.IsSequence() && entries.empty()) reader.error(layers, "expected at least one layer");
  bool any_measured = false;
  for (const YAML::Node& entry : entries) {
    MapReader l(reader, entry, "a layer");
    Layer layer;
    layer.name = l.string("name").value_or(fmt::format("layer{}", model.layers.size()));
    layer.forward_flops = l.quantity<Flop>("forward_flops").value_or(Flop(0));
    layer.backward_flops = l.quantity<Flop>("backward_flops").value_or(layer.forward_flops * 2.0);
    layer.forward_time = l.quantity<Seconds>("forward_time");
    layer.backward_time = l.quantity<Seconds>("backward_time");
    layer.parameter_bytes = l.quantity<Bytes>("parameter_bytes").value_or(Bytes(0));
    layer.activation_bytes = l.quantity<Bytes>("activation_bytes").value_or(Bytes(0));
    layer.forward_bytes = l.quantity<Bytes>("forward_bytes").value_or(Bytes(0));
    if (auto kind = l.choice("kind", "layer kind", layer_kind_names())) layer.kind = *layer_kind_from_name(*kind);
    const auto repeat = l.integer("repeat", 1, 100000).value_or(1);
    // A refused or misspelt time is said where it is written, not again as missing.
    if (layer.forward_time.has_value() != layer.backward_time.has_value() && !l.refused("forward_time") &&
        !l.refused("backward_time"))
      reader.error(entry, "give both 'forward_time' and 'backward_time', or neither");
    if (layer.forward_time) any_measured = true;
    if (layer.forward_time && layer.forward_flops.value() > 0)
      reader.error(entry, "give either measured times or FLOPs for a layer, not both");
    l.finish();
    for (std::int64_t r = 0; r < repeat; ++r) {
      Layer copy = layer;
      if (repeat > 1) copy.name = fmt::format("{}.{}", layer.name, r);
      model.layers.push_back(std::move(copy));
    }
  }
  // An unknown GPU there, or a misspelt key, is reported where it is written.
  if (any_measured && !map.has("measured_on") && !map.refused("measured_on"))
    reader.error(node, "layers with measured times need 'measured_on' (the catalog GPU they were measured on)");
  map.finish();
  return model;
}

std::optional<Dtype> read_dtype(MapReader& map) {
  if (auto name = map.choice("dtype", dtype_names())) return dtype_from_name(*name);
  return std::nullopt;
}

std::optional<Dtype> read_kernel_dtype(MapReader& map, const Cluster& cluster) {
  const std::optional<Dtype> dtype = read_dtype(map);
  if (dtype != Dtype::fp8 && dtype != Dtype::mxfp8) return dtype;
  for (const NodeType& type : cluster.node_types)
    // A node type whose GPU model is unknown has been reported already; its empty spec has nothing to test.
    if (!type.gpu.name.empty() && !type.gpu.peak(*dtype))
      map.reader().error(map.get("dtype"),
                         fmt::format("node type '{}': {} has no {} tensor cores to run dtype {} on{}", type.name,
                                     type.gpu.name, *dtype == Dtype::fp8 ? "FP8" : "MXFP8", dtype_name(*dtype),
                                     *dtype == Dtype::mxfp8 && type.gpu.peak_fp8 ? " (fp8 runs on it)" : ""));
  return dtype;
}

TrainingOptions read_training_options(MapReader& map, const Cluster& cluster) {
  TrainingOptions options;
  options.global_batch = static_cast<int>(map.integer("global_batch", 1, 1 << 30, true).value_or(1));
  options.dtype = read_kernel_dtype(map, cluster).value_or(options.dtype);
  if (const YAML::Node algorithm = map.get("collective_algorithm"); algorithm.IsDefined())
    if (auto selection = read_entry(map.reader(), algorithm, builtin_collective_algorithms()))
      options.collective_algorithm = selection->name;
  const std::string optimizer_name = map.choice("optimizer", {"adam", "sgd_momentum", "sgd"}).value_or("adam");
  options.optimizer = optimizer_name == "adam"           ? Optimizer::adam
                      : optimizer_name == "sgd_momentum" ? Optimizer::sgd_momentum
                                                         : Optimizer::sgd;
  options.precision =
      map.choice("precision", {"fp32", "mixed"}).value_or("fp32") == "mixed" ? Precision::mixed : Precision::fp32;
  options.bucket_size = map.positive_quantity<Bytes>("bucket_size").value_or(options.bucket_size);
  options.overlap = map.boolean("overlap");
  return options;
}

}  // namespace dnnsim
