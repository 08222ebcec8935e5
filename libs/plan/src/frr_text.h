// frr.conf pieces both targets write (outputs.cpp for Linux, sonic_frr.cpp for SONiC's
// split-unified file), so the two stay the same where they should.
#pragma once

#include <string>
#include <vector>

namespace twinrail::plan::frrtext {

inline constexpr int kMaxPaths = 64;        // Debian's FRR is built with 64-way multipath
inline constexpr int kHostRouteTable = 10;  // hostrouted's route_table default

inline std::string n(long v) {
    return std::to_string(v);
}

// A BGP unnumbered peer group over `ports`: eBGP to whoever answers, no advertisement
// delay, 3/9 s timers.
inline std::string peerGroup(const std::string& group, const std::vector<std::string>& ports) {
    std::string c = " neighbor " + group + " peer-group\n";
    c += " neighbor " + group + " remote-as external\n";
    c += " neighbor " + group + " advertisement-interval 0\n";
    c += " neighbor " + group + " timers 3 9\n";
    for (const auto& p : ports) c += " neighbor " + p + " interface peer-group " + group + "\n";
    return c;
}

}  // namespace twinrail::plan::frrtext
