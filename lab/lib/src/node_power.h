// A whole lab switch failed as a dead switch (links cut, every process killed) and
// restored as a boot (node_power.cpp).
#pragma once

#include <string>
#include <vector>

#include "twinrail/lab/plan_lab.h"

namespace twinrail::lab {

// A switch of the lab (it has, or had before a power-off, its own Redis), not a NIC.
bool isLabSwitch(const std::string& labName, const std::string& node);
bool isPoweredOff(const std::string& labName, const std::string& node);
// `ports` are every port of the node. powerOff records what ran; powerOn starts it again
// and raises the ports, the host ports last (announcing is the caller's).
void powerOff(const std::string& labName, const std::string& node,
              const std::vector<std::string>& ports);
void powerOn(const std::string& labName, const LabBinaries& bins, const std::string& node,
             const std::vector<std::string>& ports);

}  // namespace twinrail::lab
