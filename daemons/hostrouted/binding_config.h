// The host-address binding the planner writes for every host port, and the operator's
// requests to thaw frozen addresses, read from the config_db.json shape:
//   HOSTROUTED_BINDING|<ip>   ifname: the interface hostrouted hears the host on (a routed
//                             port, or with EVPN-MH the rail bridge's SVI); port: with an
//                             SVI, the member (ES bond) the host is behind
//   HOSTROUTED_UNFREEZE|<ip>  requested: unix seconds; an address frozen before then thaws
//                             (twinrail clear host-freeze writes it)
// An address with a binding is routed only where it is bound; a port with bindings routes
// only its bound addresses. Ports without one learn as before (host_registry.h).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "twinrail/common/ip.h"
#include "twinrail/service/config_fields.h"

namespace twinrail::hostrouted {

struct HostBinding {
    std::string ifname;
    std::string port;  // empty unless ifname is an SVI
    bool operator==(const HostBinding&) const = default;
};

using HostBindings = std::map<IpAddr, HostBinding>;
using UnfreezeRequests = std::map<IpAddr, long long>;  // address -> unix seconds

std::optional<service::ConfigError> parseBindings(const nlohmann::json& table, HostBindings& out);
std::optional<service::ConfigError> parseUnfreeze(const nlohmann::json& table,
                                                  UnfreezeRequests& out);

// What the binding says of `ip` heard on `ifname`.
enum class BindingVerdict {
    Unbound,         // neither the address nor the port has a binding: learn as before
    Bound,           // bound here
    BoundElsewhere,  // the address is bound to another interface
    NotBoundHere,    // the port has bindings, and this address is not one of them
};
std::string_view bindingVerdictName(BindingVerdict v);

class BindingIndex {
  public:
    void reset(const HostBindings& bindings);
    BindingVerdict check(const IpAddr& ip, const std::string& ifname) const;
    const HostBinding* find(const IpAddr& ip) const;
    // The addresses bound to an interface (the kernel ARP/ND guard's allow list).
    std::vector<IpAddr> boundTo(const std::string& ifname) const;
    bool hasBindings(const std::string& ifname) const { return byIfname_.count(ifname) != 0; }
    const std::map<std::string, std::vector<IpAddr>>& byInterface() const { return byIfname_; }

  private:
    HostBindings bindings_;
    std::map<std::string, std::vector<IpAddr>> byIfname_;
};

}  // namespace twinrail::hostrouted
