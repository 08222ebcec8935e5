#include "twinrail/lab/bond_nic.h"

#include <arpa/inet.h>
#include <linux/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "twinrail/lab/shell.h"

namespace twinrail::lab {
namespace {

// After the dual-send ARP filter (pref 1) and planesteer's per-peer pins (100-29999).
constexpr int kHashPref = 30000;     // the BPF hash: odd flows
constexpr int kDefaultPref = 30010;  // everything else
std::atomic<bool> stopAgent{false};

Argv egressFilter(const BondNic& n, int pref, const std::string& section,
                  const std::string& target) {
    Argv c{
        "tc",     "filter", "replace",  "dev", n.bond, "egress", "pref",      std::to_string(pref),
        "handle", "1",      "protocol", "all", "bpf",  "obj",    n.bpfObject, "sec",
        section};
    if (target.empty()) {
        c.insert(c.end(), {"action", "drop"});
    } else {
        c.insert(c.end(), {"action", "mirred", "egress", "redirect", "dev", target});
    }
    return c;
}

// A port's frames enter the bond, as a bond's rx_handler takes them.
void addReceive(std::vector<Argv>& c, const BondNic& n, const std::string& port) {
    c.push_back({"tc", "qdisc", "replace", "dev", port, "clsact"});
    c.push_back({"tc", "filter",   "replace", "dev",     port,       "ingress", "pref",
                 "1",  "protocol", "all",     "u32",     "match",    "u32",     "0",
                 "0",  "action",   "mirred",  "ingress", "redirect", "dev",     n.bond});
}

// The seed's dual-send ARP: every ARP mirrored to port1 and redirected to port2.
Argv dualSendArp(const BondNic& n) {
    return {"tc",     "filter",   "add",    "dev",      n.bond,   "egress",  "pref",
            "1",      "protocol", "arp",    "u32",      "match",  "u32",     "0",
            "0",      "action",   "mirred", "egress",   "mirror", "dev",     n.ports[0],
            "action", "mirred",   "egress", "redirect", "dev",    n.ports[1]};
}

bool hasCarrier(const std::string& port) {
    std::ifstream up("/sys/class/net/" + port + "/operstate");
    std::string state;
    up >> state;
    return state == "up";
}

}  // namespace

void writeBondHashObject(const std::string& path) {
    auto bytes = bondHashObject();
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + path);
}

std::string macForAddress(const std::string& dotted) {
    in_addr a{};
    if (inet_pton(AF_INET, dotted.c_str(), &a) != 1)
        throw std::invalid_argument("not an IPv4 address: " + dotted);
    auto* b = reinterpret_cast<const unsigned char*>(&a.s_addr);
    char buf[18];
    std::snprintf(buf, sizeof(buf), "02:00:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3]);
    return buf;
}

std::vector<Argv> bondSetupCommands(const BondNic& n) {
    if (n.ports.size() != 2) throw std::invalid_argument("a lab bond has exactly two ports");
    const std::string& p1 = n.ports[0];
    const std::string& p2 = n.ports[1];
    std::vector<Argv> c{{"ip", "link", "add", n.bond, "type", "veth", "peer", "name", "bondpeer"}};
    // One MAC for the bond and its ports, as a bond gives its slaves. IPv6 stays off: the
    // plan is IPv4, and link-local chatter would only add noise to the leaves' tables.
    for (const auto& d : {n.bond, std::string("bondpeer"), p1, p2}) {
        c.push_back({"sysctl", "-qw", "net.ipv6.conf." + d + ".disable_ipv6=1"});
        if (d != "bondpeer") c.push_back({"ip", "link", "set", d, "address", n.mac});
    }
    c.push_back({"ip", "link", "set", "bondpeer", "up"});
    c.push_back({"ip", "link", "set", n.bond, "up"});
    c.push_back({"ip", "addr", "add", n.address, "dev", n.bond});
    if (!n.aggregate.empty())
        c.push_back({"ip", "route", "replace", n.aggregate, "via", n.gateway, "dev", n.bond});
    for (const auto& p : {p1, p2}) addReceive(c, n, p);
    // Transmit: dual-send ARP first, then the flow hash (bondTransmitCommands).
    c.push_back({"tc", "qdisc", "replace", "dev", n.bond, "clsact"});
    if (n.dualSendArp) c.push_back(dualSendArp(n));
    c.push_back(egressFilter(n, kHashPref, "classifier", p2));
    c.push_back(egressFilter(n, kDefaultPref, "all", p1));
    return c;
}

std::vector<Argv> bondRewireCommands(const BondNic& n) {
    std::vector<Argv> c;
    for (const auto& p : n.ports) c.push_back({"ip", "link", "set", p, "address", n.mac});
    for (const auto& p : n.ports) addReceive(c, n, p);
    // The ARP filter is u32 (not replaceable by handle, see egressFilter): deleted, added.
    if (n.dualSendArp) {
        c.push_back({"tc", "filter", "del", "dev", n.bond, "egress", "pref", "1"});
        c.push_back(dualSendArp(n));
    }
    for (auto& t : bondTransmitCommands(n, true, true)) c.push_back(std::move(t));
    return c;
}

std::vector<Argv> bondTransmitCommands(const BondNic& n, bool firstUp, bool secondUp) {
    const std::string& p1 = n.ports[0];
    const std::string& p2 = n.ports[1];
    std::string odd = secondUp ? p2 : firstUp ? p1 : "";
    std::string rest = firstUp ? p1 : secondUp ? p2 : "";
    // The BPF filter keeps its program and only changes where matches go.
    return {egressFilter(n, kHashPref, "classifier", odd),
            egressFilter(n, kDefaultPref, "all", rest)};
}

int runBondAgent(const BondNic& n) {
    signal(SIGTERM, [](int) { stopAgent = true; });
    int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    sockaddr_nl sa{};
    sa.nl_family = AF_NETLINK;
    sa.nl_groups = RTMGRP_LINK;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
        std::cerr << "bond-agent: netlink: " << std::strerror(errno) << "\n";
        return 71;
    }
    bool up1 = hasCarrier(n.ports[0]), up2 = hasCarrier(n.ports[1]);
    runAll(bondTransmitCommands(n, up1, up2), false);
    std::array<char, 16384> buf{};
    while (!stopAgent) {
        pollfd p{fd, POLLIN, 0};
        // Also look every second: a lost netlink message must not leave a dead port used.
        if (::poll(&p, 1, 1000) > 0) (void)::recv(fd, buf.data(), buf.size(), 0);
        if (access(("/sys/class/net/" + n.bond).c_str(), F_OK) != 0) break;  // bond gone
        bool now1 = hasCarrier(n.ports[0]), now2 = hasCarrier(n.ports[1]);
        if (now1 == up1 && now2 == up2) continue;
        up1 = now1;
        up2 = now2;
        auto r = runAll(bondTransmitCommands(n, up1, up2), false);
        std::cout << "carrier " << n.ports[0] << (up1 ? " up" : " down") << ", " << n.ports[1]
                  << (up2 ? " up" : " down") << (r.rc == 0 ? "" : ": tc failed: " + r.err)
                  << std::endl;
    }
    ::close(fd);
    return 0;
}

}  // namespace twinrail::lab
