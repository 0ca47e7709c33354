#include "planners/spmd/spmd_planner.hpp"
namespace dnnsim {
void register_smsg_planner(SpmdPlannerRegistry&) {}
}  // namespace dnnsim
