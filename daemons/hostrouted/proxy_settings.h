// Proxy ARP/ND on host ports is hostrouted's to set: on every managed port it holds what
// the config says, and a port it stops managing gets back the off state it had before
// hostrouted turned proxying on. Ports it never proxied are never touched, so an
// operator's own setting on other ports stays as it is. Pure: the daemon does the writes.
#pragma once

#include <optional>

namespace twinrail::hostrouted {

struct ProxySetting {
    bool arp = false;
    bool nd = false;
    bool any() const { return arp || nd; }
    bool operator==(const ProxySetting&) const = default;
};

// `written`: what hostrouted last wrote to this port (none: never, or turned off again).
// Returns what to write now, or nothing.
std::optional<ProxySetting> proxyChange(const std::optional<ProxySetting>& written, bool managed,
                                        const ProxySetting& wanted);

}  // namespace twinrail::hostrouted
