#include "twinrail/frr/vty_routing.h"

#include <algorithm>
#include <array>
#include <sstream>

#include "twinrail/common/names.h"
#include "twinrail/frr/vty_protocol.h"

namespace twinrail::frr {
namespace {

struct Rule {
    std::string_view prefix;
    FrrDaemon daemon;
};

constexpr std::array<Rule, 20> kConfigRules = {{
    {"router bgp", FrrDaemon::Bgpd},
    {"route-map", FrrDaemon::Bgpd},
    {"ip prefix-list", FrrDaemon::Bgpd},
    {"ipv6 prefix-list", FrrDaemon::Bgpd},
    {"bgp community-list", FrrDaemon::Bgpd},
    {"bgp extcommunity-list", FrrDaemon::Bgpd},
    {"bgp large-community-list", FrrDaemon::Bgpd},
    {"bgp as-path access-list", FrrDaemon::Bgpd},
    {"bgp", FrrDaemon::Bgpd},  // the other `bgp ...` globals (route-map delay-timer, ...)
    {"ip import-table", FrrDaemon::Zebra},
    {"ipv6 import-table", FrrDaemon::Zebra},
    {"ip protocol", FrrDaemon::Zebra},
    {"ipv6 protocol", FrrDaemon::Zebra},
    {"ip nht", FrrDaemon::Zebra},
    {"ipv6 nht", FrrDaemon::Zebra},
    {"ip forwarding", FrrDaemon::Zebra},
    {"ipv6 forwarding", FrrDaemon::Zebra},
    {"interface", FrrDaemon::Zebra},
    {"vrf", FrrDaemon::Zebra},
    {"zebra", FrrDaemon::Zebra},
}};

constexpr std::array<Rule, 7> kExecRules = {{
    {"show bgp", FrrDaemon::Bgpd},
    {"show ip bgp", FrrDaemon::Bgpd},
    {"show route-map", FrrDaemon::Bgpd},
    {"show ip prefix-list", FrrDaemon::Bgpd},
    {"show ipv6 prefix-list", FrrDaemon::Bgpd},
    {"clear bgp", FrrDaemon::Bgpd},
    {"clear ip bgp", FrrDaemon::Bgpd},
}};

// `line` is `word` or starts with `word` and a space: "bgp" matches "bgp x", not "bgpx".
bool startsWithWords(std::string_view line, std::string_view words) {
    return line.substr(0, words.size()) == words &&
           (line.size() == words.size() || line[words.size()] == ' ');
}

std::string_view withoutNo(std::string_view line) {
    return startsWithWords(line, "no") ? line.substr(std::min<size_t>(3, line.size())) : line;
}

std::optional<FrrDaemon> daemonByName(std::string_view name) {
    if (name == "zebra") return FrrDaemon::Zebra;
    if (name == "bgpd") return FrrDaemon::Bgpd;
    return std::nullopt;
}

bool isEnd(std::string_view line) {
    return line == "end";
}
bool isConfigure(std::string_view line) {
    return line == "configure terminal" || line == "configure";
}

// Builds the scripts as the lines are placed: a line for another daemon, or an exec line
// after config lines, starts a new script or leaves config mode first.
class Planner {
  public:
    void config(FrrDaemon daemon, const std::string& line, bool topLevel) {
        if (scripts_.empty() || scripts_.back().daemon != daemon || !inConfig_) {
            scripts_.push_back(VtyScript{daemon, {"configure terminal"}});
            inConfig_ = true;
            nested_ = false;
        } else if (topLevel && nested_) {
            // Back to the top before a new block: FRR's vty would look for the line in
            // the parent nodes anyway, but this does not depend on it.
            scripts_.back().lines.insert(scripts_.back().lines.end(),
                                         {"end", "configure terminal"});
            nested_ = false;
        }
        scripts_.back().lines.push_back(line);
        if (topLevel) nested_ = opensConfigNode(line);
    }
    void exec(FrrDaemon daemon, const std::string& line) {
        if (scripts_.empty() || scripts_.back().daemon != daemon) {
            scripts_.push_back(VtyScript{daemon, {}});
        } else if (inConfig_) {
            scripts_.back().lines.emplace_back("end");
        }
        inConfig_ = false;
        scripts_.back().lines.push_back(line);
    }
    std::vector<VtyScript> take() { return std::move(scripts_); }

  private:
    std::vector<VtyScript> scripts_;
    bool inConfig_ = false;
    bool nested_ = false;
};

std::string where(size_t index, const std::string& line) {
    return "line " + std::to_string(index + 1) + " \"" + names::printable(line, 120) + "\"";
}

// Top-level stanzas of a running config: a line at indent 0 and the lines under it.
std::vector<std::string> stanzas(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line.front() == '!' || line == "end" ||
            line == "Building configuration..." || line == "Current configuration:")
            continue;
        const bool top = line.front() != ' ';
        if ((top && line != "exit") || out.empty()) {
            out.push_back(line + "\n");
        } else {
            out.back() += line + "\n";
        }
    }
    return out;
}

}  // namespace

std::string daemonName(FrrDaemon daemon) {
    return daemon == FrrDaemon::Zebra ? "zebra" : "bgpd";
}

std::optional<FrrDaemon> configLineOwner(std::string_view line) {
    line = withoutNo(line);
    for (const auto& rule : kConfigRules)
        if (startsWithWords(line, rule.prefix)) return rule.daemon;
    return std::nullopt;
}

bool opensConfigNode(std::string_view line) {
    if (startsWithWords(line, "no")) return false;
    for (std::string_view opener : {"router", "route-map", "interface", "vrf"})
        if (startsWithWords(line, opener)) return true;
    return false;
}

std::optional<FrrDaemon> execCommandOwner(std::string_view command) {
    for (const auto& rule : kExecRules)
        if (startsWithWords(command, rule.prefix)) return rule.daemon;
    if (startsWithWords(command, "show")) return FrrDaemon::Zebra;
    return std::nullopt;
}

VtyRunPlan planVtyRun(const std::vector<std::string>& vtyshArgs) {
    VtyRunPlan plan;
    std::vector<std::string> lines;
    std::vector<FrrDaemon> forced;
    for (size_t i = 0; i < vtyshArgs.size(); i += 2) {
        const std::string& flag = vtyshArgs[i];
        if (flag != "-c" && flag != "-d") {
            plan.error = "argument " + std::to_string(i + 1) + " \"" + names::printable(flag, 60) +
                         "\": only -c and -d reach FRR's vty";
            return plan;
        }
        if (i + 1 >= vtyshArgs.size()) {
            plan.error = flag + " without a value at the end of the arguments";
            return plan;
        }
        const std::string& value = vtyshArgs[i + 1];
        if (flag == "-d") {
            auto daemon = daemonByName(value);
            if (!daemon) {
                plan.error = "-d \"" + names::printable(value, 60) +
                             "\": the vty over TCP reaches zebra and bgpd only";
                return plan;
            }
            forced.push_back(*daemon);
            continue;
        }
        if (auto why = checkVtyLine(value)) {
            plan.error = "refused " + where(lines.size(), value) + ": " + *why;
            return plan;
        }
        lines.push_back(value);
    }
    if (!forced.empty()) {
        for (FrrDaemon daemon : forced) plan.scripts.push_back(VtyScript{daemon, lines});
        return plan;
    }
    Planner planner;
    bool config = false;
    FrrDaemon block = FrrDaemon::Zebra;  // the daemon of the block being configured
    bool inBlock = false;
    for (size_t i = 0; i < lines.size(); ++i) {
        const std::string& line = lines[i];
        if (isConfigure(line)) {
            config = true;
            inBlock = false;
        } else if (isEnd(line)) {
            config = false;
            inBlock = false;
        } else if (config) {
            if (auto owner = configLineOwner(line)) {
                block = *owner;
                inBlock = true;
                planner.config(block, line, true);
            } else if (inBlock) {
                planner.config(block, line, false);
            } else {
                plan.error = "cannot tell which FRR daemon owns config " + where(i, line) +
                             " (give -d zebra or -d bgpd)";
                return plan;
            }
        } else if (auto owner = execCommandOwner(line)) {
            planner.exec(*owner, line);
        } else {
            plan.error = "cannot tell which FRR daemon runs " + where(i, line) +
                         " (give -d zebra or -d bgpd)";
            return plan;
        }
    }
    plan.scripts = planner.take();
    return plan;
}

std::string mergeRunningConfigs(const std::string& zebra, const std::string& bgpd) {
    std::vector<std::string> merged = stanzas(zebra);
    for (auto& stanza : stanzas(bgpd)) {
        if (std::find(merged.begin(), merged.end(), stanza) == merged.end())
            merged.push_back(std::move(stanza));
    }
    std::string out = "Building configuration...\n\nCurrent configuration:\n!\n";
    for (const auto& stanza : merged) out += stanza + "!\n";
    out += "end\n";
    return out;
}

}  // namespace twinrail::frr
