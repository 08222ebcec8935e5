// What the planner writes for real servers in the bond attachment: each server's
// netplan file and the dual-send ARP unit (see server_config.cpp for why each piece).
#pragma once

#include <string>

#include "twinrail/plan/plan.h"

namespace twinrail::plan {

std::string bondName(const Nic& nic);                             // "bond1" for nic1
std::string serverPortName(const Nic& nic, const NicPort& port);  // "nic1p1"
// The shortest prefix holding every rail subnet (the fabric's host addresses).
std::string fabricAggregate(const Plan& plan);

std::string netplanConfig(const Plan& plan, const Server& server);
std::string dualSendUnit();               // twinrail-dual-send@.service, one instance per bond
std::string dualSendEnv(const Nic& nic);  // /etc/twinrail/dual-send/<bond>.env
// planesteer's config for the server's bonds (/etc/twinrail/planesteer.json): each
// bond's ports and, to steer peers on other rails too, its gateway and the fabric.
std::string planesteerConfig(const Plan& plan, const Server& server);

}  // namespace twinrail::plan
