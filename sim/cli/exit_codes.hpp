// dnnsim's exit codes (README, "Exit codes").
#pragma once

namespace dnnsim::cli {

inline constexpr int kExitInputError = 2;
inline constexpr int kExitExpectationMissed = 3;
inline constexpr int kExitStopped = 4;        // a limit (run.memory_budget) stopped the run; its reports are written
inline constexpr int kExitInterrupted = 130;  // 128 + SIGINT, as shells report a Ctrl-C

}  // namespace dnnsim::cli
