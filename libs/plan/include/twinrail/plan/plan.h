// A whole fabric plan: the sizing, then every switch, port, server NIC and address.
// buildPlan() is pure; the plan's JSON form (schema: proto/plan.schema.json) is what the
// lab and the config generators read.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "twinrail/plan/sizing.h"

namespace twinrail::plan {

enum class PortRole { Host, Uplink, Downlink };

struct SwitchPort {
    std::string name;  // swp<physical>[s<lane>], lanes counted from 0
    int speedGbps = 0;
    PortRole role = PortRole::Host;
    std::string peer;      // switch name, or <server>/<nic>
    std::string peerPort;  // port name on the peer
    // Leaves' host ports: the uplink that carries this downlink's traffic under static
    // smart routing (downlink i of D to uplink floor(i * U / D), in port order).
    std::string pinnedUplink;
    bool operator==(const SwitchPort&) const = default;
};

struct Switch {
    std::string name;  // p<plane>-leaf<n> or p<plane>-spine<n>
    bool spine = false;
    int plane = 1;
    int index = 1;  // n in the name
    uint32_t asn = 0;
    std::string loopback;    // a.b.c.d (a /32)
    int group = 0;           // leaves: 1-based group; spines: 0
    std::vector<int> rails;  // leaves: rails served (1-based)
    std::vector<SwitchPort> ports;
    bool operator==(const Switch&) const = default;
};

struct NicPort {
    std::string name;  // port<k>
    int plane = 1;
    std::string leaf;
    std::string leafPort;
    bool operator==(const NicPort&) const = default;
};

struct Nic {
    std::string name;  // nic<rail>
    int rail = 1;
    std::string address;  // one address for the NIC, reachable through every plane
    std::vector<NicPort> ports;
    bool operator==(const Nic&) const = default;
};

struct Server {
    std::string name;  // srv<n>
    int group = 1;
    std::vector<Nic> nics;
    bool operator==(const Server&) const = default;
};

// One per (group, rail): the leaves of that rail in every plane share the subnet and its
// gateway address, so a NIC keeps one address on both planes.
struct RailSubnet {
    int group = 1;
    int rail = 1;
    std::string prefix;   // a.b.c.d/len
    std::string gateway;  // a.b.c.d, on each host-facing port of those leaves
    bool operator==(const RailSubnet&) const = default;
};

struct Plan {
    Request request;
    Sizing sizing;
    uint32_t hostAsn = 0;  // servers' ASN in the routed attachment, else 0
    std::vector<Switch> switches;
    std::vector<Server> servers;
    std::vector<RailSubnet> subnets;
    bool operator==(const Plan&) const = default;

    const Switch* findSwitch(const std::string& name) const;
    const RailSubnet* subnetFor(int group, int rail) const;
};

std::variant<Plan, SizingError> buildPlan(const Request& request);

const char* roleName(PortRole role);
const char* lbName(Request::Lb lb);  // "ecmp", "static", "ars", "ars-global", "spray"
// Every load-balancing mode's name, in enum order, for usage text and errors.
inline constexpr const char* kLbNames = "ecmp|static|ars|ars-global|spray";
std::optional<Request::Lb> parseLb(const std::string& name);
// Fills every leaf host port's pinnedUplink (plans read from files older than version 3).
void assignUplinkPins(Plan& plan);

nlohmann::json toJson(const Plan& plan);
// Reads a plan file's JSON; errors name the field ("switches[3].ports[0].speed_gbps").
std::variant<Plan, SizingError> planFromJson(const nlohmann::json& j);

}  // namespace twinrail::plan
