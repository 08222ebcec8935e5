// What the lab tests share: a lab name unique to the process, the binaries under test,
// what a lab may leave behind, all-to-all reachability through each plane, and a base
// fixture that owns one lab and reads its nodes.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <sstream>
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
    return lab::PlanLab::leftovers(name);
}

// Every NIC pings every other NIC, and every leaf pings every NIC from its loopback. A
// loopback lives in one plane only, so the replies must come back through that plane:
// together that is all-to-all reachability through each plane. Returns the failures.
inline std::string pingAllPlanes(const std::string& name, const twinrail::plan::Plan& p) {
    std::string failures;
    auto pingAll = [&](const std::string& node, const std::string& from, const std::string& self) {
        for (const auto& b : p.servers) {
            for (const auto& bn : b.nics) {
                if (bn.address == self) continue;
                auto r = lab::inNodeRun(name, node, {"ping", "-c1", "-W2", "-I", from, bn.address});
                if (r.rc != 0) failures += node + "-" + bn.address + "\n";
            }
        }
    };
    for (const auto& a : p.servers)
        for (const auto& an : a.nics) pingAll(lab::PlanLab::nicNode(a, an), an.address, an.address);
    for (const auto& sw : p.switches)
        if (!sw.spine) pingAll(sw.name, sw.loopback, "");
    return failures;
}

// Every NIC pings every other NIC with both directions pinned to one plane (a tc filter
// on each bond0 sending the pair's packets out that plane's port), for each plane: the
// data path of every plane, not just the routes. Returns the failures.
inline std::string pingEachPlane(const std::string& name, const twinrail::plan::Plan& p) {
    std::string failures;
    auto pin = [&name](const std::string& node, const std::string& dst, const std::string& port) {
        return lab::inNodeRun(
                   name, node,
                   {"tc",        "filter",   "add",    "dev",    "bond0",    "egress", "pref",
                    "5",         "protocol", "ip",     "u32",    "match",    "ip",     "dst",
                    dst + "/32", "action",   "mirred", "egress", "redirect", "dev",    port})
            .rc;
    };
    auto unpin = [&name](const std::string& node) {
        lab::inNodeRun(name, node, {"tc", "filter", "del", "dev", "bond0", "egress", "pref", "5"});
    };
    for (const auto& a : p.servers) {
        for (const auto& an : a.nics) {
            for (const auto& b : p.servers) {
                for (const auto& bn : b.nics) {
                    if (&an == &bn) continue;
                    auto na = lab::PlanLab::nicNode(a, an), nb = lab::PlanLab::nicNode(b, bn);
                    for (size_t k = 0; k < an.ports.size(); ++k) {
                        pin(na, bn.address, an.ports[k].name);
                        pin(nb, an.address, bn.ports[k].name);
                        auto r =
                            lab::inNodeRun(name, na, {"ping", "-c2", "-i0.2", "-W1", bn.address});
                        if (r.rc != 0)
                            failures += na + "->" + nb + " via " + an.ports[k].name + "\n";
                        unpin(na);
                        unpin(nb);
                    }
                }
            }
        }
    }
    return failures;
}

// All-to-all through each plane, as the plan's attachment allows it: bonded hosts route
// only their rail's prefix (no leaf loopback is reachable from them), so a bond plan is
// checked NIC to NIC pinned to each plane, a routed plan also from every leaf loopback.
inline std::string pingEveryPlane(const std::string& name, const twinrail::plan::Plan& p) {
    return p.request.attach == twinrail::plan::Attach::Bond ? pingEachPlane(name, p)
                                                            : pingAllPlanes(name, p);
}

// A fixture owning one lab: the lab is taken down after each test, however it ended, and
// must leave nothing behind. The reads are what a test checks on a node.
class LabTest : public ::testing::Test {
  protected:
    // `first`: the lab name's first letters, so two suites' labs are told apart.
    explicit LabTest(const std::string& first = "c") : name_(labName(first)) {}
    void TearDown() override {
        lab::PlanLab::down(name_);
        EXPECT_TRUE(leftovers(name_).empty());
    }
    // `argv` in the node's namespace (no shell): its standard output.
    std::string sh(const std::string& node, const lab::Argv& argv) const {
        return lab::inNodeRun(name_, node, argv).out;
    }
    // redis-cli on the node's Redis (its socket in the lab's state directory), database `db`.
    std::string redis(const std::string& node, const std::string& db, const lab::Argv& args) const {
        lab::Argv argv{"redis-cli", "-s",
                       lab::PlanLab::stateDir(name_) + "/" + node + "/redis.sock", "-n", db};
        argv.insert(argv.end(), args.begin(), args.end());
        return lab::run(argv).out;
    }
    // The destinations in a leaf's table 10: the host routes hostrouted installed.
    std::set<std::string> table10(const std::string& leaf) const {
        std::set<std::string> out;
        std::istringstream in(sh(leaf, {"ip", "route", "show", "table", "10"}));
        for (std::string line; std::getline(in, line);) out.insert(line.substr(0, line.find(' ')));
        return out;
    }
    std::string name_;
};

}  // namespace twinrail::it
