// Per-interface kernel settings under /proc/sys, written only through a Writer that holds
// the daemon's allow-list: a daemon that owns proxy ARP on its ports cannot be made to
// write net.ipv4.ip_forward or net.ipv4.conf.all.* by a bad port name or a bug. The unit
// narrows the same thing from outside (ProtectKernelTunables= plus ReadWritePaths= for
// the subtrees only). A write that fails says why, so the caller can log it.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace twinrail::sysctl {

// The per-interface directories a daemon may touch: net.ipv4.conf.<ifname>.* and so on.
enum class Section {
    Ipv4Conf,   // net.ipv4.conf
    Ipv6Conf,   // net.ipv6.conf
    Ipv4Neigh,  // net.ipv4.neigh
    Ipv6Neigh,  // net.ipv6.neigh
};

std::string_view sectionName(Section section);  // "net.ipv4.conf"

// One allowed setting: `key` under `section` for any interface.
struct Setting {
    Section section;
    std::string_view key;
};

// hostrouted's: proxy ARP and ND on its host-facing ports, and the delay the kernel puts
// on proxied ARP replies there. Nothing else.
inline constexpr Setting kHostroutedSettings[] = {
    {Section::Ipv4Conf, "proxy_arp"},
    {Section::Ipv6Conf, "proxy_ndp"},
    {Section::Ipv4Neigh, "proxy_delay"},
};

// /proc/sys/net/ipv4/conf/<ifname>/<key>. The interface name is one path element, dots
// and all: net.ipv4.conf.Ethernet0.10.proxy_arp is .../conf/Ethernet0.10/proxy_arp (the
// dotted form cannot say which dot separates). Checks nothing: Writer does.
std::string path(Section section, std::string_view ifname, std::string_view key,
                 std::string_view root = "/proc/sys");

// The dotted name for messages, with the interface name made printable.
std::string displayName(Section section, std::string_view ifname, std::string_view key);

class Writer {
  public:
    // `allowed` must outlive the Writer (the constants above do). `root` is for tests.
    explicit Writer(std::span<const Setting> allowed, std::string root = "/proc/sys");

    // nullopt when the setting may be touched, else why not: a (section, key) not in the
    // allow-list, or an ifname that is not a valid interface name or is "all"/"default"
    // (the kernel's entries for every interface).
    std::optional<std::string> refusal(Section section, std::string_view ifname,
                                       std::string_view key) const;

    // Empty on success, else "<dotted name>: <why>". `value` must be a decimal integer
    // (every allowed setting is one); anything else is refused.
    std::string write(Section section, std::string_view ifname, std::string_view key,
                      std::string_view value) const;
    // The value's first word; nullopt when refused or unreadable.
    std::optional<std::string> read(Section section, std::string_view ifname,
                                    std::string_view key) const;

  private:
    std::span<const Setting> allowed_;
    std::string root_;
};

}  // namespace twinrail::sysctl
