// The `kind: pipeline` scenario fixtures the scenario-reading tests share: a four-GPU cluster, a four-layer
// model and the workload around a body (tests/unit/sim/scenario_pipeline*_test.cpp).
//
// Line numbers: every scenario is kCluster (8 lines) + "workload:" (line 9) + "  kind: pipeline"
// (line 10) + the body given to `pipeline()`, whose first line is line 11. The workload mapping
// itself starts at its first key, 10:3.
#pragma once

#include <gtest/gtest.h>

#include <source_location>
#include <stdexcept>
#include <string>

#include "sim/scenario/scenario.hpp"
#include "sim/workloads/pipeline/pipeline_workload.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim::testing::pipeline_scenarios {

// kTwoBoxCluster (tests/support/scenario_files.hpp) named: 8 lines.
inline const std::string kCluster = "name: pipe\n" + kTwoBoxCluster;

// Four identical layers: 4 MB of parameters (1e6 fp32 parameters) and 1 MB of activations each.
inline const std::string kModel =
    R"(  model: {layers: [{forward_flops: "1GFlop", parameter_bytes: "4MB", activation_bytes: "1MB", repeat: 4}]}
)";

inline std::string pipeline(const std::string& body) { return kCluster + "workload:\n  kind: pipeline\n" + body; }

// Lines 11–14 of a valid workload without its planner/stages (line 15 on): 4 layers, 8 samples in 4
// micro-batches, 1F1B.
inline std::string valid_head() { return kModel + "  global_batch: 8\n  micro_batches: 4\n  schedule: 1f1b\n"; }

inline const PipelineWorkloadSpec& spec_of(const Scenario& scenario) {
  const auto* spec = scenario.workload_as<PipelineWorkloadSpec>();
  if (spec == nullptr) throw std::logic_error("not a pipeline workload");
  return *spec;
}

// Exactly one diagnostic, at line:column, containing `text`.
inline void expect_single_error(const std::string& yaml, int line, int column, const std::string& text,
                                const std::source_location& caller = std::source_location::current()) {
  expect_errors(errors_of(yaml), {{line, column, text}}, caller);
}

}  // namespace dnnsim::testing::pipeline_scenarios
