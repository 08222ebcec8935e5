// Per-interface kernel settings under /proc/sys. A write that fails says why, so the
// caller can log it with the setting's name.
#pragma once

#include <optional>
#include <string>

namespace twinrail::sysctl {

// "net.ipv4.conf.swp1.proxy_arp" style names; '.' inside an interface name is not
// supported (Linux allows it, switch port names do not use it).
std::string path(const std::string& name);

// Empty on success, else "<path>: <strerror>".
std::string write(const std::string& name, const std::string& value);
std::optional<std::string> read(const std::string& name);

}  // namespace twinrail::sysctl
