// Every point of a sweep checked against its base scenario before anything runs (docs/sweeps.md,
// "Checking"): the base loaded with the point's overrides, each problem reported at the axis value that
// caused it (the sweep file's line and column), once.
#pragma once

#include <vector>

#include "models/common/diagnostics.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace dnnsim {

// Loads the base scenario with each point's overrides. A problem the base has on its own is reported
// once as it is; a problem located at an override, or naming a key an axis sets, goes to the axis
// value that produced it (`origins[point][k]`: where the point's k-th assignment came from), or once to
// the axis key (`key_where[k]`, in SweepSpec::axis_keys order) when every value of that key met it
// alike (a misspelt key: one mistake, one error); anything else to the axis value when the point has
// one, else to `axes_where`. The first 20 distinct problems of points are reported, the rest counted.
void validate_sweep_points(const SweepSpec& spec, const std::vector<std::vector<SourceLocation>>& origins,
                           const std::vector<SourceLocation>& key_where, const SourceLocation& axes_where,
                           DiagnosticSink& sink);

}  // namespace dnnsim
