// FRR's running config as a set of context paths, e.g.
//   "router bgp 65101 / address-family ipv4 unicast / redistribute table 10".
// Daemons declare the lines they need; this says exactly which are missing, and how to
// add only those, so a daemon never rewrites configuration it does not own.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace twinrail::frr {

// A required line and the contexts that enclose it. The special context "router bgp"
// stands for the default-VRF BGP instance, whatever its AS number.
struct ConfigLine {
    std::vector<std::string> context;
    std::string line;
    std::string describe() const;
};

class RunningConfig {
  public:
    static RunningConfig parse(const std::string& text);
    bool has(const ConfigLine& required) const;
    std::optional<std::string> bgpRouterHeader() const;  // "router bgp 65101"
    // Lines directly under `context` ("router bgp" allowed) that start with `prefix`.
    std::vector<std::string> linesUnder(const std::vector<std::string>& context,
                                        const std::string& prefix) const;

  private:
    std::vector<std::string> resolve(const ConfigLine& line) const;
    std::set<std::string> paths_;
    std::optional<std::string> bgpHeader_;
};

std::vector<ConfigLine> missingLines(const RunningConfig& running,
                                     const std::vector<ConfigLine>& required);

// vtysh arguments ("-c", "configure terminal", "-c", ...) adding one missing line.
// Empty when the line needs a BGP instance that does not exist.
std::vector<std::string> vtyshAddArgs(const RunningConfig& running, const ConfigLine& line);

// One vtysh invocation adding all `lines` in order (each entered from the top level).
// Lines that need a missing BGP instance are skipped.
std::vector<std::string> vtyshBatchArgs(const RunningConfig& running,
                                        const std::vector<ConfigLine>& lines);

}  // namespace twinrail::frr
