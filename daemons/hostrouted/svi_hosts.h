// Hosts on SVIs (SONiC's shape: one VLAN per rail, untagged members `EthernetN`). The kernel
// learns a host's neighbor entry on the SVI, so which member port the host is behind comes
// from the bridge FDB (MAC -> port). Two kernel shapes, told apart by what the kernel reports:
//  * a VLAN-unaware bridge per rail, itself the SVI `VlanX` (what namespaces build here);
//  * SONiC's vlanmgrd shape: ONE VLAN-aware bridge `Bridge`, and each SVI `VlanX` an 802.1Q
//    device on it (vid X). FDB entries sit on the member ports with `master Bridge vlan X`,
//    so only entries of VLAN X place a host on VlanX.
// Pure: the daemon feeds FDB entries and neighbors in and acts on the answers.
//  * sviBridgeOf: which bridge, and which of its VLANs, an SVI learns its hosts through.
//  * BridgeFdb: the FDB entries of the bridges, mark-and-sweep over snapshots.
//  * SviNeighbors: the neighbors heard on SVIs, by MAC, so that an FDB change (a host
//    learned, or moved to another member port) re-evaluates exactly the hosts it concerns.
//  * placeOnSvi: where a host heard on an SVI goes, given the FDB, the member's state, the
//    member it is counted on now, and its binding's `port`.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "twinrail/common/ip.h"
#include "twinrail/netlink/types.h"

namespace twinrail::hostrouted {

// The bridge whose FDB places an SVI's hosts, and the VLAN whose entries count there
// (0: any, the SVI is a VLAN-unaware bridge itself).
struct SviBridge {
    int bridge = 0;
    uint16_t vlan = 0;
    bool operator==(const SviBridge&) const = default;
};
// `svi` is a bridge: itself, any VLAN. `svi` is a vlan device whose lower device `lower` is a
// bridge: that bridge, the device's VLAN. Anything else is no SVI (none).
std::optional<SviBridge> sviBridgeOf(const netlink::LinkState& svi,
                                     const netlink::LinkState* lower);
// Whether an FDB entry of `bridge` in `vlan` concerns the SVI over `sb`.
bool sviSees(const SviBridge& sb, int bridge, uint16_t vlan);

class BridgeFdb {
  public:
    // Returns true when the port the entry's MAC sits behind changed (learned or moved).
    // Entries that are not hosts' (the ports' own addresses, NTF_SELF) are ignored. A
    // VLAN-aware bridge keeps one entry per (VLAN, MAC): the same MAC in two VLANs is two
    // entries, possibly behind two ports.
    bool update(const netlink::FdbEntry& entry, bool removed);
    // The port `mac` sits behind in `sb`'s VLAN (in any VLAN when sb.vlan is 0).
    std::optional<int> portOf(const SviBridge& sb, const MacAddr& mac) const;
    void beginSnapshot();
    void endSnapshot();  // entries the snapshot did not repeat are gone
    size_t size() const { return entries_.size(); }

  private:
    struct Entry {
        int port = 0;
        bool seen = true;
    };
    // (bridge, MAC, VLAN): the VLANs of one MAC are neighbours, for the any-VLAN look-up.
    std::map<std::tuple<int, MacAddr, uint16_t>, Entry> entries_;
};

class SviNeighbors {
  public:
    void remember(const netlink::NeighborEntry& neigh);
    void forget(const IpAddr& ip, int svi);
    std::vector<netlink::NeighborEntry> withMac(int svi, const MacAddr& mac) const;
    std::vector<netlink::NeighborEntry> on(int svi) const;
    void clear();
    size_t size() const { return byIp_.size(); }

  private:
    std::map<IpAddr, netlink::NeighborEntry> byIp_;
    std::map<std::pair<int, MacAddr>, std::set<IpAddr>> byMac_;
};

struct SviLookup {
    std::optional<int> fdbPort;     // the FDB's port for the host's MAC, none: not known
    bool fdbPortUp = false;         // that port is up and a member of the SVI's bridge
    std::string fdbPortName;        // its name
    std::optional<int> heldBehind;  // the port it is counted on now, when held on this SVI
    std::string boundPort;          // HOSTROUTED_BINDING port; empty: any member
};

enum class SviVerdict {
    Behind,      // route it, counted on `port`
    Keep,        // the FDB forgot the MAC (aged): keep it where it is counted (`port`)
    MemberDown,  // behind a member that is down: withdraw, until port and host are back
    WrongPort,   // bound behind another member: refused (trust)
    Unresolved,  // new, and the FDB does not know it yet: not routed until it does
};
struct SviPlacement {
    SviVerdict verdict = SviVerdict::Unresolved;
    int port = 0;
};
std::string_view sviVerdictName(SviVerdict v);

SviPlacement placeOnSvi(const SviLookup& in);

}  // namespace twinrail::hostrouted
