// The DAPPLE artifact's measured layer profiles shipped in data/profiles/dapple (its README gives their
// source and licence), read by the profile, planner and scenario tests. Pure: usable from every
// layer's tests.
#pragma once

#include <filesystem>
#include <string>

#include "dnnsim/source_paths.hpp"

namespace dnnsim::testing {

inline const std::filesystem::path kDappleProfiles =
    std::filesystem::path(DNNSIM_SOURCE_DIR) / "data" / "profiles" / "dapple";

// The path of one profile file, e.g. "vgg-19-pbs-32.txt".
inline std::string dapple_profile(const std::string& file) { return (kDappleProfiles / file).string(); }

}  // namespace dnnsim::testing
