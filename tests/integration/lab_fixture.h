// What the lab tests share: a lab name unique to the process, the binaries under test,
// what a lab may leave behind, and all-to-all reachability through each plane.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/shell.h"

namespace twinrail::it {

namespace lab = twinrail::lab;
namespace fs = std::filesystem;

// 1-6 characters, unique per process, so parallel runs cannot collide.
inline std::string labName(const std::string& first = "c") {
    std::string id = first;
    for (auto pid = static_cast<unsigned>(getpid()); pid > 0 && id.size() < 6; pid /= 36)
        id += "0123456789abcdefghijklmnopqrstuvwxyz"[pid % 36];
    return id;
}

inline lab::LabBinaries binaries() {
    lab::LabBinaries b;
    b.hostrouted = HOSTROUTED_BIN;
    b.pathqd = PATHQD_BIN;
    b.self = TWINRAIL_LAB_BIN;
    b.twinrail = TWINRAIL_BIN;
    return b;
}

inline std::vector<std::string> leftovers(const std::string& name) {
    std::vector<std::string> out;
    const std::string pre = lab::PlanLab::nsPrefix(name);
    if (lab::sh("ip netns list | grep -c '^" + pre + "'").out != "0\n") out.push_back("namespaces");
    if (fs::exists(lab::PlanLab::stateDir(name))) out.push_back(lab::PlanLab::stateDir(name));
    for (const char* root : {"/var/run/frr", "/etc/frr"})
        for (const auto& e : fs::directory_iterator(root))
            if (e.path().filename().string().rfind(pre, 0) == 0) out.push_back(e.path().string());
    if (lab::sh("pgrep -f -- '--frr-pathspace " + pre + "'").rc == 0) out.push_back("daemons");
    return out;
}

// Every NIC pings every other NIC, and every leaf pings every NIC from its loopback. A
// loopback lives in one plane only, so the replies must come back through that plane:
// together that is all-to-all reachability through each plane. Returns the failures.
inline std::string pingAllPlanes(const std::string& name, const twinrail::plan::Plan& p) {
    std::string failures;
    auto pingAll = [&](const std::string& node, const std::string& from, const std::string& self) {
        std::string cmd = "true";
        for (const auto& b : p.servers)
            for (const auto& bn : b.nics)
                if (bn.address != self)
                    cmd += "; ping -c1 -W2 -I " + from + " " + bn.address +
                           " >/dev/null 2>&1 || echo " + node + "-" + bn.address;
        failures += lab::inNode(name, node, cmd).out;
    };
    for (const auto& a : p.servers)
        for (const auto& an : a.nics) pingAll(lab::PlanLab::nicNode(a, an), an.address, an.address);
    for (const auto& sw : p.switches)
        if (!sw.spine) pingAll(sw.name, sw.loopback, "");
    return failures;
}

}  // namespace twinrail::it
