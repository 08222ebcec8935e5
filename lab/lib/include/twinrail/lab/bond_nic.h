// A bonded NIC without the bonding driver (these machines' kernel has none), built from
// what it has, so that on the wire it behaves like the bond the planner emits for real
// servers (balance-xor, layer3+4, miimon, dual-send ARP):
//   * bond0: a veth (its peer, bondpeer, stays in the same namespace only to give it a
//     carrier) with the NIC's one MAC and one address; port1/port2 carry the same MAC;
//   * transmit (tc on bond0's egress): every ARP is mirrored to port1 and redirected to
//     port2, the seed's dual-send recipe verbatim; other traffic by the kernel's L3/L4
//     flow hash (a BPF classifier, bpf/bond_hash.c) to port2 when odd, else port1;
//   * receive: whatever arrives on a port is redirected into bond0, as a bond's
//     rx_handler does;
//   * miimon: a small agent (bond-agent) follows each port's carrier over netlink and, when
//     one is lost, sends everything out the other within milliseconds (a real bond's
//     miimon 100 bounds it at 100 ms); it puts the hash back when the port returns.
#pragma once

#include <string>
#include <vector>

#include "twinrail/lab/shell.h"

namespace twinrail::lab {

struct BondNic {
    std::string bond = "bond0";
    std::vector<std::string> ports;  // exactly two: port1, port2
    std::string mac;                 // the NIC's one MAC
    std::string address;             // a.b.c.d/len in the rail subnet (on-link)
    std::string gateway;             // the rail gateway
    std::string aggregate;           // the fabric's host prefix, through the gateway
    std::string bpfObject;           // where bondHashObject() was written
    // The seed's dual-send ARP (balance-xor). false: an 802.3ad bond toward an EVPN-MH
    // pair, whose ARP goes out one port only, as the hash (port1 while it is up) picks.
    bool dualSendArp = true;
};

// The BPF object (an ELF), embedded at build time.
std::string_view bondHashObject();
void writeBondHashObject(const std::string& path);

// Commands (argument vectors, run in order inside the NIC's namespace, stopping at the
// first failure) that turn its two ports into the bond.
std::vector<Argv> bondSetupCommands(const BondNic& nic);

// The tc commands that make bond0's egress follow which ports have carrier: both up, the
// hash; one up, all of it there; none, nothing (dropped, as a bond with no slave).
std::vector<Argv> bondTransmitCommands(const BondNic& nic, bool firstUp, bool secondUp);

// After a port device was replaced (a cable moved to it): its MAC, its receive filter,
// and bond0's filters that point at it again.
std::vector<Argv> bondRewireCommands(const BondNic& nic);

// The bond agent's loop (twinrail-lab bond-agent, run detached in the NIC's namespace):
// applies bondTransmitCommands on every carrier change of a port; returns when bond0 is
// gone or on SIGTERM.
int runBondAgent(const BondNic& nic);

// 02:00 followed by the IPv4 address: unique per NIC, stable across lab runs.
std::string macForAddress(const std::string& dottedAddress);

}  // namespace twinrail::lab
