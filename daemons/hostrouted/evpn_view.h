// What FRR (zebra) knows about EVPN multihoming on this leaf, parsed from its JSON views:
//   show evpn arp-cache vni all detail json   neighbors, with the sync flags
//   show evpn mac vni all detail json         MACs, with the Ethernet segment they are on
//   show evpn es detail json                  the segments, with their state here
// On a stock kernel this is the only place where a host that the ES peer learned is known:
// zebra's sync install is refused by the kernel (FRR's NTF_E_MH_PEER_SYNC is a
// Cumulus-kernel flag; see docs/evpn-mh.md). Pure parsing, no I/O.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "twinrail/common/ip.h"

namespace twinrail::hostrouted {

struct EvpnNeighbor {
    IpAddr ip;
    uint32_t vni = 0;
    std::optional<MacAddr> mac;
    bool remote = false;         // type "remote": learned from a type-2 route of another VTEP
    std::string remoteVtep;      // remote only
    bool localInactive = false;  // FRR holds it local, but this leaf's kernel does not
    bool peerActive = false;     // the ES peer has it active (synced to us)
    bool peerProxy = false;      // we advertise it on behalf of the peer
    bool operator==(const EvpnNeighbor&) const = default;
};

struct EvpnMac {
    uint32_t vni = 0;
    MacAddr mac{};
    bool remote = false;
    std::string interface;  // local: the port it was learned on (an ES's access port)
    std::string esi;        // empty: not on an Ethernet segment
    bool peerActive = false;
    bool operator==(const EvpnMac&) const = default;
};

struct EvpnSegment {
    std::string esi;
    std::string accessPort;
    bool local = false;              // this leaf has a port on it
    bool operUp = false;             // and that port is up
    std::vector<std::string> peers;  // ES peers' VTEP addresses
    bool operator==(const EvpnSegment&) const = default;
};

struct EvpnView {
    std::map<IpAddr, EvpnNeighbor> neighbors;
    std::map<std::pair<uint32_t, MacAddr>, EvpnMac> macs;
    std::map<std::string, EvpnSegment> segments;  // by ESI
    bool operator==(const EvpnView&) const = default;

    const EvpnMac* macOf(const EvpnNeighbor& n) const;
    const EvpnSegment* segmentOf(const EvpnMac& m) const;
};

struct EvpnParseError {
    std::string message;  // names the view and the entry
};

std::variant<EvpnView, EvpnParseError> parseEvpnView(const std::string& arpCacheJson,
                                                     const std::string& macJson,
                                                     const std::string& esJson);

}  // namespace twinrail::hostrouted
