// Operator graphs (models/spmd/op_graph.hpp): hand-written files with shapes and FLOPs derived from
// them, located errors (cycles, unknown operators, mismatched shapes), and zoo models as graphs.
#include "models/spmd/op_graph.hpp"

#include <gtest/gtest.h>

#include "models/dnn/zoo.hpp"
#include "tests/support/diagnostics.hpp"

namespace dnnsim {
namespace {

using namespace testing;

TEST(OpGraph, HandWrittenMlpHasDerivedShapesAndFlops) {
  const OpGraph g = parse_op_graph(R"(name: mlp
dtype: fp16
ops:
  - {name: loss, kind: loss, inputs: [y]}
  - {name: x, kind: input, shape: [64, 1024]}
  - {name: w1, kind: parameter, shape: [1024, 4096]}
  - {name: h, kind: matmul, inputs: [x, w1]}
  - {name: y, kind: elementwise, inputs: [h]}
)",
                                   "mlp.yaml");
  ASSERT_EQ(g.size(), 5u);
  // Topological order, ties in file order: x, w1, h, y, loss.
  EXPECT_EQ(g.op(0).name, "x");
  EXPECT_EQ(g.op(4).name, "loss");
  const SpmdOp& h = g.op(2);
  EXPECT_EQ(h.rows, 64);
  EXPECT_EQ(h.columns, 4096);
  EXPECT_DOUBLE_EQ(h.forward_flops.value(), 2.0 * 64 * 1024 * 4096);  // 2mnk
  EXPECT_DOUBLE_EQ(g.op(3).forward_flops.value(), 64.0 * 4096);       // one per element
  EXPECT_DOUBLE_EQ(g.bytes(2).value(), 64.0 * 4096 * 2);              // fp16
  EXPECT_DOUBLE_EQ(g.parameter_bytes().value(), 1024.0 * 4096 * 2);
}

TEST(OpGraph, CycleUnknownOperatorAndShapesAreLocated) {
  const auto cycle = diagnostics_thrown_by([] {
    (void)parse_op_graph(R"(ops:
  - {name: x, kind: input, shape: [4, 4]}
  - {name: a, kind: elementwise, inputs: [b]}
  - {name: b, kind: elementwise, inputs: [a]}
  - {name: loss, kind: loss, inputs: [b]}
)",
                         "g.yaml");
  });
  expect_errors(cycle, {{3, 5, "operator 'a' is on a dependency cycle: a ← b ← a"},
                        {4, 5, "operator 'b' is on a dependency cycle"}});

  const auto unknown = diagnostics_thrown_by([] {
    (void)parse_op_graph("ops:\n  - {name: x, kind: input, shape: [4, 4]}\n  - {name: l, kind: loss, inputs: [xx]}\n",
                         "g.yaml");
  });
  expect_errors(unknown, {{3, 36, "unknown operator 'xx'; did you mean 'x'?"}});

  const auto shapes = diagnostics_thrown_by([] {
    (void)parse_op_graph(R"(ops:
  - {name: x, kind: input, shape: [4, 8]}
  - {name: w, kind: parameter, shape: [4, 8]}
  - {name: h, kind: matmul, inputs: [x, w]}
  - {name: l, kind: loss, inputs: [h]}
)",
                         "g.yaml");
  });
  expect_errors(shapes, {{4, 5, "matmul 'h': A is 4×8 but B is 4×8"}});
}

// Rhino's strided split gives every device the same slice of each of `stride` fused blocks: 8 columns
// are not 3 equal blocks.
TEST(OpGraph, StrideThatDoesNotDivideTheColumnsIsLocated) {
  const auto errors = diagnostics_thrown_by([] {
    (void)parse_op_graph(R"(ops:
  - {name: x, kind: input, shape: [4, 4]}
  - {name: w, kind: parameter, shape: [4, 8], stride: 3}
  - {name: h, kind: matmul, inputs: [x, w]}
  - {name: l, kind: loss, inputs: [h]}
)",
                         "g.yaml");
  });
  expect_errors(errors, {{3, 55, "stride 3 does not divide the 8 columns of 'w' into equal blocks"}});
}

TEST(OpGraph, MissingShapeKindAndLoss) {
  const auto errors = diagnostics_thrown_by([] {
    (void)parse_op_graph("ops:\n  - {name: x, kind: input}\n  - {name: y, kind: elementwize, inputs: [x]}\n", "g.yaml");
  });
  ASSERT_GE(errors.size(), 2u) << dump(errors);
  expect_error(errors[0], 2, 5, "an input needs 'shape: [rows, columns]'");
  expect_error(errors[1], 3, 21, "unknown operator kind 'elementwize'; did you mean 'elementwise'?");
}

// A zoo transformer as a graph: the FLOPs of its operators add up to the model's forward FLOPs for
// the batch (each layer's matmuls, attention products and the rest of its FLOPs become operators).
TEST(OpGraph, ZooModelKeepsItsForwardFlops) {
  ModelOptions options;
  options.seq = 128;
  const LayerModel bert = builtin_models().at("bert-base").value(options);
  const int batch = 8;
  const OpGraph g = build_op_graph(bert, batch, Dtype::fp32, {});
  double model = 0, graph = 0;
  for (const Layer& l : bert.layers) model += l.forward_flops.value() * batch;
  for (const SpmdOp& op : g.ops())
    if (op.kind != OpKind::loss) graph += op.forward_flops.value();
  EXPECT_NEAR(graph, model, 1e-9 * model);
  EXPECT_EQ(g.ops().back().kind, OpKind::loss);
}

}  // namespace
}  // namespace dnnsim
