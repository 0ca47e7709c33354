// The Gantt chart of one run's timeline, as a gnuplot script (gnuplot.hpp; docs/plots.md).
// Deterministic: same run → byte-identical script.
#pragma once

#include <string>

namespace dnnsim {

struct SimulationResult;  // sim/run/simulation.hpp (kept out of this header: it brings SimGrid in)

// The gnuplot script of a run's Gantt chart: one row per (device, stream) that ran a task, from the
// first device at the top; one box per task and device it occupies (as in trace.json: the compute
// device, a transfer's source, every member of a collective), coloured by phase; x is the simulated
// time in ms; the title gives the makespan. Tasks that never ran are left out and counted in the title.
// Boxes are `boxxyerror` rows of inline data (three numbers per box), not `set object rect`, so
// 100k tasks stay a few MB of script and a few seconds of gnuplot.
[[nodiscard]] std::string make_gantt_script(const SimulationResult& result, const std::string& png_path);

}  // namespace dnnsim
