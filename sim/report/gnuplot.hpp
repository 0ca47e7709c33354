// gnuplot: the pieces every dnnsim script is made of, and the runner that draws a script.
//
// dnnsim writes gnuplot scripts whose data is inline (`$name << EOD … EOD`), so that each script is
// self-contained and reproducible (`gnuplot fig.gp` redraws the figure), and runs gnuplot on them.
// The scripts pick the `pngcairo` terminal when the gnuplot at hand has it (Debian's gnuplot-nox
// does) and fall back to the libgd `png` terminal otherwise.
#pragma once

#include <string>
#include <string_view>

namespace dnnsim {

// A double-quoted gnuplot string (the terminal is noenhanced, so '_' and '^' print as themselves).
[[nodiscard]] std::string gnuplot_string(std::string_view text);
// The terminal lines of a width × height PNG written to `output`: pngcairo when this gnuplot has it
// (antialiased, any font), else the libgd png terminal.
[[nodiscard]] std::string png_terminal(int width, int height, const std::string& output);
// A number as the scripts write it: 12 significant digits, shortest form.
[[nodiscard]] std::string gnuplot_number(double value);

// Runs `program` (default: gnuplot from PATH) with `script` on its standard input and waits for it.
// Returns 0 on success; otherwise non-zero with `error` saying why: gnuplot not installed (exit code
// 127, "install it with scripts/install-deps"), or it failed (its exit status and error output).
int render_with_gnuplot(const std::string& script, std::string& error, const std::string& program = "gnuplot");

}  // namespace dnnsim
