#include "twinrail/plan/evpn_mh.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace twinrail::plan {
namespace {

constexpr uint32_t kAuxBase = (10U << 24) | (253U << 16);  // 10.253.0.0/16
constexpr uint32_t kVniBase = 10000;

std::string dotted(uint32_t a) {
    return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 255) + "." +
           std::to_string((a >> 8) & 255) + "." + std::to_string(a & 255);
}

int railOfPeer(const std::string& peer) {
    auto at = peer.rfind("/nic");
    return at == std::string::npos ? 0 : std::atoi(peer.c_str() + at + 4);
}

}  // namespace

EvpnMhLeaf evpnMhLeaf(const Plan& plan, const Switch& leaf) {
    if (leaf.spine) throw std::invalid_argument(leaf.name + " is a spine");
    const int otherPlane = leaf.plane == 1 ? 2 : 1;
    std::string peerName = "p" + std::to_string(otherPlane) + leaf.name.substr(2);
    const Switch* peer = plan.findSwitch(peerName);
    if (peer == nullptr) throw std::invalid_argument(leaf.name + " has no pair " + peerName);
    EvpnMhLeaf out;
    out.peer = peerName;
    out.peerAsn = peer->asn;
    // One /31 per pair, by the leaf's index: plane 1 takes the even address.
    const uint32_t pairBase = kAuxBase + static_cast<uint32_t>(leaf.index - 1) * 2;
    const uint32_t self = pairBase + (leaf.plane == 1 ? 0 : 1);
    const uint32_t other = pairBase + (leaf.plane == 1 ? 1 : 0);
    out.auxAddress = dotted(self) + "/31";
    out.peerAuxAddress = dotted(other);
    char mac[18];
    std::snprintf(mac, sizeof mac, "44:38:39:ff:%02x:%02x", (leaf.index >> 8) & 255,
                  leaf.index & 255);
    out.esSysMac = mac;
    const Switch* plane1 = leaf.plane == 1 ? &leaf : peer;
    int esId = 0;
    for (const auto& p : leaf.ports) {
        if (p.role != PortRole::Host) continue;
        EvpnSegment s{"hbond" + std::to_string(++esId), p.name, esId};
        int rail = railOfPeer(p.peer);
        EvpnBridge* br = nullptr;
        for (auto& b : out.bridges)
            if (b.rail == rail) br = &b;
        if (br == nullptr) {
            const RailSubnet* rs = plan.subnetFor(leaf.group, rail);
            if (rs == nullptr) throw std::invalid_argument(leaf.name + ": no subnet for rail");
            EvpnBridge b;
            b.rail = rail;
            b.bridge = "br-rail" + std::to_string(rail);
            b.vxlan = "vx-rail" + std::to_string(rail);
            b.vni = kVniBase + static_cast<uint32_t>(rail);
            b.gateway = rs->gateway + rs->prefix.substr(rs->prefix.find('/'));
            b.routeTarget = std::to_string(plane1->asn) + ":" + std::to_string(b.vni);
            out.bridges.push_back(b);
            br = &out.bridges.back();
        }
        br->members.push_back(s.bond);
        out.segments.push_back(s);
    }
    return out;
}

std::string evpnZebraConfig(const EvpnMhLeaf& leaf) {
    std::string c;
    for (const auto& s : leaf.segments) {
        c += "interface " + s.bond + "\n evpn mh es-id " + std::to_string(s.esId) +
             "\n evpn mh es-sys-mac " + leaf.esSysMac + "\nexit\n!\n";
    }
    return c;
}

std::string evpnBgpConfig(const Plan& /*plan*/, const EvpnMhLeaf& leaf) {
    const std::string& p = leaf.peerAuxAddress;
    std::string c = " neighbor " + p + " remote-as " + std::to_string(leaf.peerAsn) + "\n";
    c += " neighbor " + p + " description ES peer " + leaf.peer + " (AUX)\n";
    c += " neighbor " + p + " timers 3 9\n";
    c += " address-family ipv4 unicast\n  no neighbor " + p + " activate\n exit-address-family\n";
    c += " address-family l2vpn evpn\n  neighbor " + p + " activate\n  advertise-all-vni\n";
    for (const auto& b : leaf.bridges) {
        c += "  vni " + std::to_string(b.vni) + "\n   route-target import " + b.routeTarget +
             "\n   route-target export " + b.routeTarget + "\n  exit-vni\n";
    }
    c += " exit-address-family\n";
    return c;
}

std::string evpnLinkCommands(const Plan& plan, const EvpnMhLeaf& leaf, bool bonds) {
    const std::string& gwMac = plan.request.gatewayMac;
    std::string local = leaf.auxAddress.substr(0, leaf.auxAddress.find('/'));
    std::string c = "set -e\nip addr add " + leaf.auxAddress + " dev " + leaf.auxPort +
                    "\nip link set " + leaf.auxPort + " up\n";
    if (bonds) {
        for (const auto& s : leaf.segments) {
            c += "ip link add " + s.bond + " type bond mode 802.3ad lacp_rate fast miimon 100 " +
                 "ad_actor_system " + leaf.esSysMac + "\nip link set " + s.port + " down\n" +
                 "ip link set " + s.port + " master " + s.bond + "\n";
        }
    }
    for (const auto& b : leaf.bridges) {
        c += "ip link add " + b.bridge + " address " + gwMac +
             " type bridge stp_state 0 mcast_snooping 0\n";
        c += "ip link add " + b.vxlan + " type vxlan id " + std::to_string(b.vni) + " local " +
             local + " dstport 4789 nolearning ttl 64\n";
        c += "ip link set " + b.vxlan + " master " + b.bridge + "\n";
        // ARP is answered by the leaf (neigh_suppress); unknown unicast stays on this leaf's
        // segments: a host on a shared ES is reached through the local port.
        c += "bridge link set dev " + b.vxlan + " learning off neigh_suppress on flood off\n";
        for (const auto& m : b.members) c += "ip link set " + m + " master " + b.bridge + "\n";
        // No entries from gratuitous ARP: a host is learned from its own requests to the
        // gateway, and one host's unsolicited claim cannot create another's entry.
        c += "sysctl -qw net.ipv4.conf." + b.bridge + ".arp_accept=0\n";
        c += "ip addr add " + b.gateway + " dev " + b.bridge + " noprefixroute\n";
        c += "ip link set " + b.vxlan + " up\nip link set " + b.bridge + " up\n";
        for (const auto& m : b.members) c += "ip link set " + m + " up\n";
    }
    if (bonds)
        for (const auto& s : leaf.segments) c += "ip link set " + s.port + " up\n";
    return c;
}

}  // namespace twinrail::plan
