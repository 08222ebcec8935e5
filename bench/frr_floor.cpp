// FRR's own floor, on the dual-plane lab: one /32 written into p1-leaf1's table 10 (as
// hostrouted writes a host), until it is in p1-spine1's and p1-leaf2's kernel FIBs (two
// BGP hops to the remote leaf). Timestamps come from route events read in each
// namespace; the route is written through netlink from inside p1-leaf1. Trials with
// FRR's defaults, then with each knob the generated configs could set, in the same run.
// Writes bench/results/frr_floor.json.
//
// usage: frr_floor TWINRAIL_LAB HOSTROUTED PATHQD OUT.json [TRIALS]
#include <fcntl.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "bench_util.h"
#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/shell.h"
#include "twinrail/netlink/policy_writer.h"
#include "twinrail/netlink/route_watch.h"

namespace lab = twinrail::lab;
namespace nl = twinrail::netlink;
namespace plan = twinrail::plan;
using json = nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

using twinrail::bench::percentile;

namespace {

constexpr const char* kLab = "frfl";

// Runs `make` with this thread inside the lab node's network namespace.
template <typename F>
auto inNamespace(const std::string& node, F make) {
    int original = open("/proc/self/ns/net", O_RDONLY);
    int target = open(("/var/run/netns/" + lab::PlanLab::nsPrefix(kLab) + node).c_str(), O_RDONLY);
    setns(target, CLONE_NEWNET);
    close(target);
    auto result = make();
    setns(original, CLONE_NEWNET);
    close(original);
    return result;
}

int routeEvents(const std::string& node) {
    return inNamespace(node, [] {
        int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
        sockaddr_nl sa{};
        sa.nl_family = AF_NETLINK;
        sa.nl_groups = RTMGRP_IPV4_ROUTE;
        (void)::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
        return fd;
    });
}

// Waits until `fd` reports a new route for `dst`; the time it arrived, or nullopt.
std::optional<Clock::time_point> waitFor(int fd, const twinrail::IpPrefix& dst,
                                         Clock::time_point until) {
    std::vector<uint32_t> buf(16384);
    while (Clock::now() < until) {
        pollfd p{fd, POLLIN, 0};
        int left = static_cast<int>(
            std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count());
        if (::poll(&p, 1, std::max(1, left)) <= 0) continue;
        auto at = Clock::now();
        ssize_t n = ::recv(fd, buf.data(), buf.size() * 4, 0);
        auto* h = reinterpret_cast<nlmsghdr*>(buf.data());
        for (int len = static_cast<int>(n); n > 0 && NLMSG_OK(h, static_cast<unsigned>(len));
             h = NLMSG_NEXT(h, len)) {
            auto ev = nl::decodeRouteEvent(h);
            if (ev && !ev->removed && ev->route.dst == dst && ev->route.table == RT_TABLE_MAIN)
                return at;
        }
    }
    return std::nullopt;
}

json trials(int n, int& next, const std::string& ifname) {
    std::vector<double> toSpine, toLeaf;
    int spine = routeEvents("p1-spine1"), leaf = routeEvents("p1-leaf2");
    auto writer =
        inNamespace("p1-leaf1", [] { return std::make_unique<nl::KernelPolicyWriter>(); });
    int ifindex = std::stoi(
        lab::inNodeRun(kLab, "p1-leaf1", {"cat", "/sys/class/net/" + ifname + "/ifindex"}).out);
    for (int i = 0; i < n; ++i, ++next) {
        nl::KernelRoute r;
        r.dst = *twinrail::IpPrefix::parse("10.201." + std::to_string(next / 250) + "." +
                                           std::to_string(1 + next % 250) + "/32");
        r.table = 10;
        r.protocol = 4;  // static: not hostrouted's
        r.nexthops = {{ifindex, {}, 1, false}};
        writer->submit({nl::PolicyOp::ReplaceRoute, r, {}, {}});
        auto t0 = Clock::now();
        writer->flush();
        auto s = waitFor(spine, r.dst, t0 + 3s);
        auto l = waitFor(leaf, r.dst, t0 + 3s);
        if (s) toSpine.push_back(std::chrono::duration<double, std::milli>(*s - t0).count());
        if (l) toLeaf.push_back(std::chrono::duration<double, std::milli>(*l - t0).count());
        writer->submit({nl::PolicyOp::RemoveRoute, r, {}, {}});
        writer->flush();
        std::this_thread::sleep_for(300ms);
    }
    close(spine);
    close(leaf);
    auto summary = [n](const std::vector<double>& v) {
        return json{{"arrived", v.size()},
                    {"of", n},
                    {"p50_ms", percentile(v, 0.5)},
                    {"p95_ms", percentile(v, 0.95)},
                    {"samples_ms", v}};
    };
    return {{"to_spine_fib", summary(toSpine)}, {"to_remote_leaf_fib", summary(toLeaf)}};
}

void zebraWorkQueue(const plan::Plan& p, int ms) {
    for (const auto& sw : p.switches) {
        if (sw.plane != 1) continue;
        lab::runOk({"vtysh", "-N", lab::PlanLab::nsPrefix(kLab) + sw.name, "-c",
                    "configure terminal", "-c", "zebra work-queue " + std::to_string(ms)});
    }
}

}  // namespace

static int benchMain(int argc, char** argv) {
    if (argc < 5) {
        std::cerr << "usage: frr_floor TWINRAIL_LAB HOSTROUTED PATHQD OUT.json [TRIALS]\n";
        return 64;
    }
    int n = argc > 5 ? std::stoi(argv[5]) : 20;
    lab::LabBinaries bins{argv[2], argv[3], argv[1], "twinrail"};
    auto p = std::get<plan::Plan>(plan::buildPlan(lab::defaultLabRequest()));
    lab::PlanLab l(kLab, p, bins);
    l.up();
    std::string host;
    for (const auto& port : p.findSwitch("p1-leaf1")->ports)
        if (port.role == plan::PortRole::Host && host.empty()) host = port.name;
    int next = 0;
    json out{{"trials", n}, {"path", "p1-leaf1 table 10 -> p1-spine1 -> p1-leaf2 (2 BGP hops)"}};
    // zebra's rib work-queue hold: FRR's default 10 ms, then what the planner writes (1 ms),
    // then the default again (the machine did not drift in between).
    for (auto [name, ms] :
         {std::pair{"frr_default_work_queue_10ms", 10}, std::pair{"generated_work_queue_1ms", 1},
          std::pair{"frr_default_again", 10}}) {
        zebraWorkQueue(p, ms);
        out[name] = trials(n, next, host);
        std::cout << name << ": " << out[name]["to_remote_leaf_fib"]["p50_ms"] << " ms\n";
    }
    lab::PlanLab::down(kLab);
    std::ofstream(argv[4]) << out.dump(2) << "\n";
    return 0;
}

int main(int argc, char** argv) {
    return twinrail::bench::labMain("frr_floor", kLab,
                                    [argc, argv] { return benchMain(argc, argv); });
}
