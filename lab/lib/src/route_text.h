// Reading `ip route show` text, for the lab's convergence checks and status.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace twinrail::lab {

// In `ip route show` output (one block per route, next hops indented), which of
// `candidates` does the route to `dst` leave through?
inline std::vector<std::string> portsUsed(const std::string& routes, const std::string& dst,
                                          const std::vector<std::string>& candidates) {
    std::istringstream in(routes);
    std::string line, block;
    bool inBlock = false;
    while (std::getline(in, line)) {
        bool start = !line.empty() && line[0] != ' ' && line[0] != '\t';
        if (start) {
            if (inBlock) break;
            inBlock = line.rfind(dst + " ", 0) == 0;
        }
        if (inBlock) block += line + " \n";
    }
    std::vector<std::string> out;
    for (const auto& p : candidates)
        if (block.find("dev " + p + " ") != std::string::npos) out.push_back(p);
    return out;
}

inline bool routeUsesAll(const std::string& routes, const std::string& dst,
                         const std::vector<std::string>& ports) {
    return portsUsed(routes, dst, ports).size() == ports.size();
}

}  // namespace twinrail::lab
