// The diagnostic sink (models/common/diagnostics.hpp): problems come out in file order, and a problem
// found twice — a file two sections of a scenario read — comes out once.
#include "models/common/diagnostics.hpp"

#include <gtest/gtest.h>

#include "tests/support/diagnostics.hpp"

namespace dnnsim {
namespace {

TEST(DiagnosticSink, AProblemFoundTwiceIsReportedOnce) {
  DiagnosticSink sink;
  sink.error({"apps.csv", 3, 6}, "max_local_bsz: expected a number, found 'x'");
  sink.error({"scenario.yaml", 2, 1}, "unknown key 'nme'");
  sink.append({{{"apps.csv", 3, 6}, "max_local_bsz: expected a number, found 'x'"},
               {{"apps.csv", 3, 6}, "another problem at the same place"}});
  const auto diagnostics = testing::diagnostics_thrown_by([&] { sink.throw_if_any(); });
  ASSERT_EQ(diagnostics.size(), 3u) << testing::dump(diagnostics);
  testing::expect_error(diagnostics[0], 3, 6, "expected a number");
  testing::expect_error(diagnostics[1], 3, 6, "another problem at the same place");
  EXPECT_EQ(diagnostics[2].location.file, "scenario.yaml");
  EXPECT_EQ(sink.size(), 4u);  // what readers count to tell whether they added a problem is unchanged
}

}  // namespace
}  // namespace dnnsim
