// `twinrail verify ...`: see verify.h. Exit 0 healthy, 69 degraded, 66 cannot read.
#pragma once

#include <string>
#include <vector>

namespace twinrail::cli {
int verifyCommand(const std::vector<std::string>& args, bool asJson);
}
