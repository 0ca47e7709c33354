#include "planners/spmd/spmd_planner.hpp"
namespace dnnsim {
void register_rhino_planner(SpmdPlannerRegistry&) {}
}  // namespace dnnsim
