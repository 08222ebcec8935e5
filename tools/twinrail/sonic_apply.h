// `twinrail sonic-apply SWITCH_DIR --running FILE --out DIR`: a switch's plan onto that
// switch as it is, in SONiC's order, as a bundle of SONiC CLI steps (libs/plan
// sonic_apply.h decides; this reads, checks the target with YANG and writes).
#pragma once

#include <string>
#include <vector>

namespace twinrail::cli {

int sonicApplyCommand(const std::vector<std::string>& args);

}  // namespace twinrail::cli
