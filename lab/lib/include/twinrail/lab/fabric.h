// A fabric of network namespaces joined by veth pairs, with one FRR instance (zebra,
// bgpd, staticd under pathspace -N <namespace>) per switch. Every name carries a
// per-process prefix so parallel runs cannot collide, and the destructor removes every
// namespace, process and file it created.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "twinrail/lab/shell.h"

namespace twinrail::lab {

class Fabric {
  public:
    explicit Fabric(std::string prefix);
    ~Fabric();
    Fabric(const Fabric&) = delete;
    Fabric& operator=(const Fabric&) = delete;

    const std::string& prefix() const { return prefix_; }
    std::string ns(const std::string& node) const { return prefix_ + node; }

    void addNode(const std::string& node);
    void link(const std::string& a, const std::string& ifA, const std::string& b,
              const std::string& ifB);
    // Runs `argv` inside the node's namespace (ip netns exec), no shell.
    ShellResult run(const std::string& node, const Argv& argv) const;
    std::string runOk(const std::string& node, const Argv& argv) const;
    // Each of `commands` in order, as runOk (the first failure throws); their outputs.
    std::string runAllOk(const std::string& node, const std::vector<Argv>& commands) const;

    void startFrr(const std::string& node, const std::string& config);
    // FRR in a container of its own, as a SONiC switch runs it (frr_container.h).
    void startFrrInContainer(const std::string& node, const std::string& config, bool bgpdVtyPort);
    // `command` goes to vtysh -c as one argument; vtysh runs each of its lines. Wherever
    // the node's FRR runs (on the host or in its container).
    std::string vtysh(const std::string& node, const std::string& command) const;
    std::string frrDir(const std::string& node) const;  // /var/run/frr/<ns>

    void teardown();
    // Forgets every namespace and FRR instance without removing them: they outlive this
    // object (a lab that `twinrail-lab down` removes later).
    void detach();
    const std::vector<std::string>& nodes() const { return nodes_; }

  private:
    void stopFrr(const std::vector<std::string>& nodes);
    std::string prefix_;
    std::vector<std::string> nodes_;
    std::vector<std::string> frrNodes_;
    int vethCounter_ = 0;
};

// The smallest fabric that shows a host route crossing BGP: one spine, two leaves, a
// host behind each leaf (h1 on l1:swp3, h2 on l2:swp3) and a spare host port l1:swp4
// (to h3) for storm tests. Dual-stack subnets:
//   l1:swp3 10.1.1.1/24 2001:db8:1::1/64   h1 10.1.1.10 2001:db8:1::10
//   l2:swp3 10.2.2.1/24 2001:db8:2::1/64   h2 10.2.2.10 2001:db8:2::10
//   l1:swp4 10.8.0.1/16                    h3 10.8.0.10
// BGP unnumbered between leaves and spine; ipv4 and ipv6 unicast activated.
void buildMiniFabric(Fabric& fabric);

// Two spines, two leaves, one host per leaf: the smallest fabric with a choice of
// paths. Spines share AS 65000 (so no leaf-spine-leaf-spine valley paths); leaves are
// 65101/65102. l1:swp1-s1:swp1, l1:swp2-s2:swp1, l2:swp1-s1:swp2, l2:swp2-s2:swp2;
// h1 (10.1.1.10/24) on l1:swp3, h2 (10.2.2.10/24) on l2:swp3. Returns when l1 has both
// spines as next hops for h2's subnet.
void buildDualSpineFabric(Fabric& fabric);

// Replaces the root qdisc of `node`:`port` with a token bucket of `mbit` Mbit/s (queue
// limit 50 ms of data), and marks ECN on it as a lossless fabric's WRED profile does
// (ecn_marker.h: ECN-capable packets CE past kEcnMarkAfter of queue at that rate; nothing
// else is touched). mbit 0 removes the shaper (back to the default qdisc); the marker
// stays, at the rate it had.
void shapePort(Fabric& fabric, const std::string& node, const std::string& port, double mbit);
// The queue past which a shaped port marks: the plan's WRED profile marks from 1 MB of
// queue, 20 us at 400G, which is under one packet at the lab's 100 Mbit/s; 1 ms is about
// eight packets there, a queue that a paced sender never builds and a burst does.
inline constexpr std::chrono::microseconds kEcnMarkAfter{1000};

// Next-hop weights of a multipath route as `ip route show` prints them, by device:
// "nexthop via inet6 fe80::1 dev swp1 weight 25" -> {"swp1", 25}. A single-path route
// gives its device with weight 1.
std::map<std::string, int> parseRouteWeights(const std::string& ipRouteShow);

// The FRR instance of namespace `ns` (pathspace -N ns, files in /var/run/frr/<ns>), as
// the lab runs it: starts `daemons` in order, each waited for, then loads
// /var/run/frr/<ns>/frr.conf through vtysh, as watchfrr does after a restart.
void startFrrDaemons(const std::string& ns, const std::vector<std::string>& daemons);
// Sends `signal` (SIGTERM: a clean stop; SIGKILL: a crash) to `daemons` of every instance
// at once, and waits until all are gone (SIGKILL after 5 s).
void stopFrrDaemons(const std::vector<std::string>& namespaces,
                    const std::vector<std::string>& daemons, int signal);

std::string leafOrSpineFrrConfig(const std::string& hostname, int asn, const std::string& routerId,
                                 const std::vector<std::string>& fabricPorts);

}  // namespace twinrail::lab
