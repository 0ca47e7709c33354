#include "models/spmd/graph_zoo.hpp"

#include <fmt/format.h>

#include <cmath>

#include "models/common/builtin_registry.hpp"
#include "models/dnn/zoo.hpp"

namespace dnnsim {

namespace {

// Adds operators with shapes and FLOPs as the header's conventions count them.
class Net {
 public:
  Net(std::string name, Dtype dtype) : graph_(std::move(name), dtype) {}

  OpId input(const std::string& name, std::int64_t rows, std::int64_t columns) {
    return graph_.add({name, OpKind::input, {}, rows, columns, Flop(0)});
  }
  OpId param(const std::string& name, std::int64_t rows, std::int64_t columns, int stride = 1, int experts = 0) {
    SpmdOp op{name, OpKind::parameter, {}, rows, columns, Flop(0)};
    op.stride = stride;
    op.experts = experts;
    return graph_.add(std::move(op));
  }
  // x · W, W a new [k × out] parameter.
  OpId linear(const std::string& name, OpId x, std::int64_t out, int stride = 1) {
    const SpmdOp in = graph_.op(x);
    const OpId w = param(name + ".weight", in.columns, out, stride);
    SpmdOp op{name,   OpKind::matmul,
              {x, w}, in.rows,
              out,    Flop(2.0 * static_cast<double>(in.rows * in.columns) * static_cast<double>(out))};
    op.stride = stride;
    return graph_.add(std::move(op));
  }
  OpId elementwise(const std::string& name, std::vector<OpId> inputs, double flops_per_element) {
    const SpmdOp in = graph_.op(inputs.front());
    SpmdOp op{name,    OpKind::elementwise, std::move(inputs),
              in.rows, in.columns,          Flop(elements(in) * flops_per_element)};
    op.stride = in.stride;
    return graph_.add(std::move(op));
  }
  OpId rowwise(const std::string& name, OpId x) {
    const SpmdOp in = graph_.op(x);
    return graph_.add({name, OpKind::rowwise, {x}, in.rows, in.columns, Flop(5.0 * elements(in))});
  }
  OpId reshape(const std::string& name, OpId x, std::int64_t rows, std::int64_t columns) {
    return graph_.add({name, OpKind::reshape, {x}, rows, columns, Flop(0)});
  }
  OpId concat(const std::string& name, std::vector<OpId> inputs) {
    std::int64_t columns = 0;
    for (OpId in : inputs) columns += graph_.op(in).columns;
    const std::int64_t rows = graph_.op(inputs.front()).rows;
    return graph_.add({name, OpKind::concat, std::move(inputs), rows, columns, Flop(0)});
  }
  // A k×k convolution (stride 1, same padding) of `x` (samples × pixels rows) to `out` channels + ReLU.
  OpId conv(const std::string& name, OpId x, std::int64_t rows, std::int64_t channels_in, std::int64_t out, int k) {
    const OpId cols = reshape(name + ".im2col", x, rows, channels_in * k * k);
    return elementwise(name + ".relu", {linear(name, cols, out)}, 1.0);
  }
  // Self-attention over `tokens` per sample on a fused [Q K V] (post-LN, PyTorch's TransformerEncoderLayer):
  // its context projected and added to x, then normalized.
  OpId attention(const std::string& name, OpId x, std::int64_t tokens, int heads) {
    const SpmdOp in = graph_.op(x);
    const OpId qkv = linear(name + ".qkv", x, 3 * in.columns, 3);
    // Q·Kᵀ and P·V, 2·t·t·h each per sample, and the softmax, 5 per score.
    const double samples = static_cast<double>(in.rows / tokens);
    const double t = static_cast<double>(tokens), h = static_cast<double>(in.columns);
    const OpId context = graph_.add({name + ".core",
                                     OpKind::attention,
                                     {qkv},
                                     in.rows,
                                     in.columns,
                                     Flop(samples * (4.0 * t * t * h + 5.0 * heads * t * t))});
    const OpId out = linear(name + ".out", context, in.columns);
    return rowwise(name + ".norm", elementwise(name + ".residual", {out, x}, 1.0));
  }
  OpId mlp(const std::string& name, OpId x, std::int64_t hidden) {
    const OpId up = elementwise(name + ".relu", {linear(name + ".fc1", x, hidden)}, 1.0);
    return rowwise(name + ".norm",
                   elementwise(name + ".residual", {linear(name + ".fc2", up, graph_.op(x).columns), x}, 1.0));
  }
  // GShard's top-2 mixture of experts (HAP's Top2TransformerEncoderLayer): the gate's scores, then every
  // token through `routed` expert rows of the experts' FFNs, added to x and normalized.
  OpId moe(const std::string& name, OpId x, int experts, std::int64_t hidden, double routed) {
    const SpmdOp in = graph_.op(x);
    const OpId gate = rowwise(name + ".gate.softmax", linear(name + ".gate", x, experts));
    const OpId w1 = param(name + ".w1", experts * in.columns, hidden, 1, experts);
    const OpId w2 = param(name + ".w2", experts * hidden, in.columns, 1, experts);
    SpmdOp op{name + ".experts",
              OpKind::experts,
              {x, w1, w2, gate},
              in.rows,
              in.columns,
              Flop(static_cast<double>(in.rows) * routed * static_cast<double>(hidden) *
                   (4.0 * static_cast<double>(in.columns) + 1.0))};
    op.experts = experts;
    op.routed = routed;
    const OpId y = graph_.add(std::move(op));
    return rowwise(name + ".norm", elementwise(name + ".residual", {y, x}, 1.0));
  }
  // Each id's row of `table`, optionally plus a second table's row (positions).
  OpId embedding(const std::string& name, OpId ids, OpId table) {
    const SpmdOp in = graph_.op(ids);
    const std::int64_t width = graph_.op(table).columns;
    return graph_.add(
        {name, OpKind::embedding, {ids, table}, in.rows, width, Flop(static_cast<double>(in.rows * width))});
  }
  OpGraph finish(OpId last, int samples) {
    graph_.add({"loss", OpKind::loss, {last}, 1, 1, Flop(static_cast<double>(graph_.op(last).rows))});
    graph_.set_samples(samples);
    return std::move(graph_);
  }
  [[nodiscard]] const SpmdOp& op(OpId id) const { return graph_.op(id); }

 private:
  static double elements(const SpmdOp& op) { return static_cast<double>(op.rows) * static_cast<double>(op.columns); }
  OpGraph graph_;
};

void require_batch(const GraphRequest& request, const std::string& name) {
  if (request.batch < 1) throw InputError(SourceLocation{}, fmt::format("graph '{}': the batch must be ≥ 1", name));
}

// HAP's VVGG (models.py): torchvision's VGG-19 on CIFAR-10's 32×32 images, the adaptive pool
// replicating the last 1×1 map to 7×7, so the 25088 → 4096 → 4096 classifier stays; 10 classes.
OpGraph hap_vgg19(const GraphRequest& request) {
  require_batch(request, "hap-vgg19");
  ModelOptions options;
  options.image = 32;
  LayerModel model = builtin_models().at("vgg19").value(options);
  Layer& head = model.layers.back();
  const double k = static_cast<double>(head.matmuls.front().k);
  head.matmuls.front().n = 10;
  head.forward_flops = head.matmuls.front().flops();
  head.backward_flops = head.forward_flops * 2.0;
  head.backward_weight_flops = head.forward_flops;
  head.parameter_bytes = Bytes(4.0 * (k * 10 + 10));
  model.name = "hap-vgg19";
  return build_op_graph(model, request.batch, request.dtype, {});
}

// HAP's VTransformer: 12 post-LN layers of 768 (12 heads, FFN 3072) on CIFAR-10 as 4×4 patches,
// 64 patches and a class token, 10 classes.
OpGraph hap_vit(const GraphRequest& request) {
  require_batch(request, "hap-vit");
  ModelOptions options;
  options.image = 32;
  LayerModel model = vit_model(
      VitConfig{.name = "hap-vit", .layers = 12, .hidden = 768, .heads = 12, .mlp = 3072, .patch = 4, .classes = 10},
      options);
  return build_op_graph(model, request.batch, request.dtype, {});
}

// HAP's RMoE (models.py, config.py): BERT-Base's 12 layers of 768 (12 heads) on WikiText-2 (33,278
// tokens, seq 128), every second layer's FFN (3072) a top-2 mixture of `experts_per_gpu` × GPUs
// experts with capacity ⌈seq / E · 1.25 · 2⌉ rows per sample and expert, then an untied decoder.
// The dispatch and combine einsums with their one-hot tensors are folded into the experts operator
// (their FLOPs, < 5% of the experts', are not counted).
OpGraph hap_bert_moe(const GraphRequest& request) {
  require_batch(request, "hap-bert-moe");
  const std::int64_t seq = 128, hidden = 768, ffn = 3072, vocab = 33278;
  const int experts = static_cast<int>(request.options->integer("experts_per_gpu")) * request.devices;
  const double capacity =
      std::ceil(static_cast<double>(seq) / experts * request.options->number("capacity_factor") * 2);
  const double routed = experts * capacity / static_cast<double>(seq);
  Net net("hap-bert-moe", request.dtype);
  const std::int64_t tokens = seq * request.batch;
  const OpId ids = net.input("input", tokens, 1);
  OpId x = net.embedding("embedding", ids, net.param("embedding.table", vocab, hidden));
  x = net.elementwise("positions", {x}, 1.0);  // + the sinusoidal encoding, a buffer
  for (int i = 0; i < 12; ++i) {
    const std::string layer = fmt::format("layer{}", i);
    x = net.attention(layer + ".attn", x, seq, 12);
    x = i % 2 == 0 ? net.mlp(layer + ".mlp", x, ffn) : net.moe(layer + ".moe", x, experts, ffn, routed);
  }
  return net.finish(net.rowwise("log_softmax", net.linear("decoder", x, vocab)), request.batch);
}

// A two-tower recommender (Yi et al., RecSys'19; Covington et al., RecSys'16): per tower an id
// embedding (1M rows of 64) beside 512 dense features, an MLP 1024 → 512 → 256 with ReLUs; the score
// is a row-wise operator over the two towers' outputs side by side.
OpGraph two_tower(const GraphRequest& request) {
  require_batch(request, "two-tower");
  Net net("two-tower", request.dtype);
  const std::int64_t b = request.batch;
  std::vector<OpId> towers;
  for (const char* side : {"user", "item"}) {
    const std::string name = side;
    const OpId ids = net.input(name + ".ids", b, 1);
    const OpId dense = net.input(name + ".features", b, 512);
    OpId x = net.concat(name + ".concat",
                        {net.embedding(name + ".embedding", ids, net.param(name + ".table", 1 << 20, 64)), dense});
    for (std::int64_t width : {1024, 512, 256})
      x = net.elementwise(fmt::format("{}.relu{}", name, width),
                          {net.linear(fmt::format("{}.fc{}", name, width), x, width)}, 1.0);
    towers.push_back(x);
  }
  return net.finish(net.rowwise("score", net.concat("towers", towers)), request.batch);
}

// Inception-like (Szegedy et al., CVPR'15): a 3×3 stem to 64 channels on 32×32 images, then blocks of
// four branches — 1×1; 1×1 → 3×3; 1×1 → 3×3 → 3×3 (a factorized 5×5); pooling → 1×1 — each a quarter
// of the block's channels, concatenated: 3 blocks of 256 at 32×32, 3 of 512 at 16×16, 2 of 1024 at
// 8×8 (a pooling before each resolution), a global pool and a 10-class classifier.
OpGraph inception(const GraphRequest& request) {
  require_batch(request, "inception");
  Net net("inception", request.dtype);
  const std::int64_t b = request.batch;
  std::int64_t side = 32, channels = 3;
  const auto rows = [&] { return b * side * side; };
  OpId x = net.conv("stem", net.input("input", rows(), 3), rows(), channels, 64, 3);
  channels = 64;
  int block = 0;
  for (const auto& [width, count] : std::vector<std::pair<std::int64_t, int>>{{256, 3}, {512, 3}, {1024, 2}}) {
    if (width > 256) {
      x = net.elementwise(fmt::format("pool{}", side), {x}, 4.0);
      side /= 2;
    }
    for (int i = 0; i < count; ++i, ++block) {
      const std::string name = fmt::format("block{}", block);
      const std::int64_t q = width / 4;
      const OpId b1 = net.conv(name + ".1x1", x, rows(), channels, q, 1);
      const OpId b2 =
          net.conv(name + ".3x3", net.conv(name + ".3x3.reduce", x, rows(), channels, q / 2, 1), rows(), q / 2, q, 3);
      const OpId b3r = net.conv(name + ".5x5.reduce", x, rows(), channels, q / 4, 1);
      const OpId b3 =
          net.conv(name + ".5x5.b", net.conv(name + ".5x5.a", b3r, rows(), q / 4, q / 2, 3), rows(), q / 2, q, 3);
      const OpId b4 = net.conv(name + ".pool.proj", net.elementwise(name + ".pool", {x}, 9.0), rows(), channels, q, 1);
      x = net.concat(name + ".concat", {b1, b2, b3, b4});
      channels = width;
    }
  }
  const OpId pooled = net.reshape("avgpool", net.elementwise("global_pool", {x}, 1.0), b, channels);
  return net.finish(net.rowwise("softmax", net.linear("classifier", pooled, 10)), request.batch);
}

// U-Net-like (Ronneberger et al., MICCAI'15) on `image`² RGB images: four levels of two 3×3
// convolutions (64, 128, 256, 512 channels) each followed by a 2×2 pooling, a bottleneck of 1024, and
// four levels up: a 2×2 up-convolution halving the channels, the level's skip connection
// concatenated, two 3×3 convolutions; a 1×1 convolution to 2 classes per pixel.
OpGraph unet(const GraphRequest& request) {
  require_batch(request, "unet");
  const std::int64_t image = request.options->integer("image");
  if (image % 16 != 0)
    throw InputError(SourceLocation{}, fmt::format("graph 'unet': the image side {} is not a multiple of 16", image));
  Net net("unet", request.dtype);
  const std::int64_t b = request.batch;
  std::int64_t side = image, channels = 3;
  const auto rows = [&] { return b * side * side; };
  OpId x = net.input("input", rows(), 3);
  std::vector<std::pair<OpId, std::int64_t>> skips;
  for (std::int64_t width : {64, 128, 256, 512, 1024}) {
    const std::string name = fmt::format("down{}", width);
    x = net.conv(name + ".conv2", net.conv(name + ".conv1", x, rows(), channels, width, 3), rows(), width, width, 3);
    channels = width;
    if (width == 1024) break;
    skips.push_back({x, width});
    x = net.elementwise(name + ".pool", {x}, 4.0);
    side /= 2;
  }
  for (auto skip = skips.rbegin(); skip != skips.rend(); ++skip) {
    const std::int64_t width = skip->second;
    const std::string name = fmt::format("up{}", width);
    side *= 2;
    const OpId up = net.linear(name + ".upconv", net.reshape(name + ".upsample", x, rows(), channels), width);
    x = net.concat(name + ".concat", {skip->first, up});
    x = net.conv(name + ".conv2", net.conv(name + ".conv1", x, rows(), 2 * width, width, 3), rows(), width, width, 3);
    channels = width;
  }
  return net.finish(net.rowwise("softmax", net.linear("classifier", x, 2)), request.batch);
}

OptionSchema moe_options() {
  OptionSchema schema;
  schema.integer("experts_per_gpu", 2, "experts per GPU of the cluster (HAP's config.py: n_expert = 2 × world_size)")
      .at_least(1);
  schema.number("capacity_factor", 1.25, "GShard's capacity factor, doubled for top-2 (HAP's config.py)")
      .range(0.01, 100);
  return schema;
}

OptionSchema unet_options() {
  OptionSchema schema;
  schema.integer("image", 128, "image side in pixels, a multiple of 16").at_least(16);
  return schema;
}

void register_builtin_graph_models(GraphZoo& r) {
  r.add("hap-vgg19",
        "VGG-19 on CIFAR-10 as HAP runs it: 32×32 images, the 25088-wide classifier kept by the adaptive pool, 10 "
        "classes",
        "Zhang et al., HAP, EuroSys'24, §5.7; alibaba/hap models.py VVGG", hap_vgg19);
  r.add("hap-vit", "ViT on CIFAR-10 as HAP runs it: 12 layers of 768, 12 heads, 4×4 patches (65 tokens), 10 classes",
        "Zhang et al., HAP, EuroSys'24, §5.7; alibaba/hap models.py VTransformer", hap_vit);
  r.add("hap-bert-moe",
        "BERT-MoE as HAP runs it: 12 layers of 768, every second FFN a top-2 mixture of 2 experts per GPU, seq 128, "
        "WikiText-2's 33,278 tokens",
        "Zhang et al., HAP, EuroSys'24, §5.7; alibaba/hap models.py RMoE; Lepikhin et al., GShard, ICLR'21",
        hap_bert_moe, moe_options());
  r.add("two-tower", "two-tower recommender: id embeddings (1M × 64) and 512 features per tower, MLPs 1024-512-256",
        "Yi et al., Sampling-Bias-Corrected Neural Modeling, RecSys'19", two_tower);
  r.add("inception",
        "Inception-like CNN: four-branch blocks (3 × 256 at 32², 3 × 512 at 16², 2 × 1024 at 8²), 10 classes",
        "Szegedy et al., Going Deeper with Convolutions, CVPR'15", inception);
  r.add("unet",
        "U-Net-like: four levels down (64–512) and up with skip connections, bottleneck 1024, 2 classes per pixel",
        "Ronneberger et al., U-Net, MICCAI'15", unet, unet_options());
}

}  // namespace

const GraphZoo& builtin_graph_models() {
  return builtin_registry<GraphZoo, register_builtin_graph_models>("graph model");
}

}  // namespace dnnsim
