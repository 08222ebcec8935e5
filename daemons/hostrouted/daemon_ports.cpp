// The per-port kernel settings. On `platform linux` proxy ARP/ND are hostrouted's to set
// (proxy_settings.h). On `platform sonic` intfmgrd owns proxy_arp, proxy_arp_pvlan,
// arp_accept and the interface MAC, and ndppd proxy ND on SVIs: hostrouted writes none of
// them, reads proxy_arp and warns (log, HOST_ROUTE_STATS sonic_settings) when it is not
// what the plan needs. proxy_delay, which SONiC never sets, stays hostrouted's on both.
#include "daemon.h"
#include "proxy_settings.h"
#include "twinrail/common/log.h"
#include "twinrail/common/sysctl.h"

namespace twinrail::hostrouted {

void Daemon::applyProxy(const Port& port) {
    if (cfg_.platform == Platform::Sonic) return applySonicPort(port);
    const std::string& name = port.link.name;
    auto it = proxyWritten_.find(name);
    std::optional<ProxySetting> written;
    if (it != proxyWritten_.end()) written = it->second;
    auto change = proxyChange(written, port.managed, ProxySetting{cfg_.proxyArp, cfg_.proxyNd});
    if (!change) return;
    // The kernel queues proxied ARP replies for a random 0-0.8 s (proxy_delay); a host's
    // first packet to each peer would wait that long. Proxying is hostrouted's, so is
    // the delay: 0 while proxying, the port's own value back afterwards.
    // Only the allow-listed per-port settings: a port name cannot turn this into any other.
    const sysctl::Writer sysctls(sysctl::kHostroutedSettings, edges_.sysctlRoot);
    using sysctl::Section;
    if (change->arp && delayBefore_.count(name) == 0)
        delayBefore_[name] = sysctls.read(Section::Ipv4Neigh, name, "proxy_delay").value_or("80");
    std::string err = sysctls.write(Section::Ipv4Conf, name, "proxy_arp", change->arp ? "1" : "0");
    if (err.empty())
        err = sysctls.write(Section::Ipv6Conf, name, "proxy_ndp", change->nd ? "1" : "0");
    if (err.empty() && change->arp)
        err = sysctls.write(Section::Ipv4Neigh, name, "proxy_delay", "0");
    if (err.empty() && !change->arp && delayBefore_.count(name) > 0) {
        err = sysctls.write(Section::Ipv4Neigh, name, "proxy_delay", delayBefore_[name]);
        delayBefore_.erase(name);
    }
    if (!err.empty()) {
        log::warning("cannot set proxy ARP/ND on ", name, ": ", err);
        return;  // tried again on the port's next link event or snapshot
    }
    log::info("port ", name, ": proxy ARP ", change->arp ? "on" : "off", ", proxy ND ",
              change->nd ? "on" : "off");
    if (change->any()) {
        proxyWritten_[name] = *change;
    } else {
        proxyWritten_.erase(name);
    }
}

void Daemon::applySonicPort(const Port& port) {
    const std::string& name = port.link.name;
    const sysctl::Writer sysctls(sysctl::kHostroutedSettings, edges_.sysctlRoot);
    using sysctl::Section;
    // Proxied replies wait a random 0-0.8 s (proxy_delay) unless it is 0; SONiC leaves it
    // at the kernel's default, so it is hostrouted's here too (and given back after).
    const bool wantDelay = port.managed && cfg_.proxyArp;
    std::string err;
    if (wantDelay && delayBefore_.count(name) == 0) {
        delayBefore_[name] = sysctls.read(Section::Ipv4Neigh, name, "proxy_delay").value_or("80");
        err = sysctls.write(Section::Ipv4Neigh, name, "proxy_delay", "0");
    } else if (!wantDelay && delayBefore_.count(name) > 0) {
        err = sysctls.write(Section::Ipv4Neigh, name, "proxy_delay", delayBefore_[name]);
        delayBefore_.erase(name);
    }
    if (!err.empty()) log::warning("cannot set proxy_delay on ", name, ": ", err);
    std::string warning;
    if (wantDelay) {
        auto proxyArp = sysctls.read(Section::Ipv4Conf, name, "proxy_arp");
        if (proxyArp != "1") {
            warning = name + " proxy_arp " + proxyArp.value_or("unreadable") +
                      " (want 1: VLAN_INTERFACE|" + name + " proxy_arp enabled)";
        }
    }
    auto it = sonicWarnings_.find(name);
    if (warning.empty()) {
        if (it != sonicWarnings_.end()) {
            log::notice("SONiC settings of ", name, " are what the plan needs now");
            sonicWarnings_.erase(it);
        }
        return;
    }
    if (it != sonicWarnings_.end() && it->second == warning) return;  // said once
    log::warning("SONiC: ", warning,
                 "; hostrouted leaves it to intfmgrd (platform sonic), hosts cannot reach "
                 "each other through the gateway until it is set");
    sonicWarnings_[name] = warning;
}

std::string Daemon::sonicSettingsSummary() const {
    if (cfg_.platform != Platform::Sonic) return "n/a";
    if (sonicWarnings_.empty()) return "ok";
    std::string out;
    for (const auto& [port, warning] : sonicWarnings_) out += (out.empty() ? "" : "; ") + warning;
    return out;
}

}  // namespace twinrail::hostrouted
