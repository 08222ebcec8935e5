#include "twinrail/frr/running_config.h"

#include <sstream>

namespace twinrail::frr {
namespace {

constexpr const char* kBgp = "router bgp";
// FRR's configuration nests 3-4 levels (router bgp / address-family / vni). Lines nested
// deeper than this are kept as children of the deepest level kept, so that text of any
// shape parses in linear time (each line's path joins at most this many parents).
constexpr size_t kMaxDepth = 8;

std::string trim(const std::string& s) {
    auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return "";
    auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

std::string join(const std::vector<std::string>& parts) {
    std::string out;
    for (const auto& p : parts) {
        if (!out.empty()) out += " / ";
        out += p;
    }
    return out;
}

bool isDefaultVrfBgp(const std::string& line) {
    return line.rfind("router bgp ", 0) == 0 && line.find(" vrf ") == std::string::npos;
}

}  // namespace

std::string ConfigLine::describe() const {
    auto parts = context;
    parts.push_back(line);
    return join(parts);
}

RunningConfig RunningConfig::parse(const std::string& text) {
    RunningConfig rc;
    std::vector<std::pair<size_t, std::string>> stack;  // (indent, line)
    std::istringstream in(text);
    std::string raw;
    while (std::getline(in, raw)) {
        std::string line = trim(raw);
        if (line.empty() || line == "!" || line == "exit" || line == "exit-address-family" ||
            line == "exit-vrf" || line == "end")
            continue;
        size_t indent = raw.find_first_not_of(' ');
        while (!stack.empty() && stack.back().first >= indent) stack.pop_back();
        std::vector<std::string> parts;
        parts.reserve(stack.size());
        for (auto& [i, l] : stack) parts.push_back(l);
        parts.push_back(line);
        rc.paths_.insert(join(parts));
        if (indent == 0 && isDefaultVrfBgp(line)) rc.bgpHeader_ = line;
        if (stack.size() < kMaxDepth) stack.emplace_back(indent, line);
    }
    return rc;
}

std::optional<std::string> RunningConfig::bgpRouterHeader() const {
    return bgpHeader_;
}

std::vector<std::string> RunningConfig::resolve(const ConfigLine& line) const {
    std::vector<std::string> parts;
    for (const auto& c : line.context) {
        if (c == kBgp) {
            if (!bgpHeader_) return {};
            parts.push_back(*bgpHeader_);
        } else {
            parts.push_back(c);
        }
    }
    parts.push_back(line.line);
    return parts;
}

std::vector<std::string> RunningConfig::linesUnder(const std::vector<std::string>& context,
                                                   const std::string& prefix) const {
    auto parts = resolve(ConfigLine{context, ""});
    if (parts.empty()) return {};
    parts.pop_back();
    std::string head = join(parts);
    if (!head.empty()) head += " / ";
    std::vector<std::string> out;
    for (auto it = paths_.lower_bound(head + prefix); it != paths_.end(); ++it) {
        if (it->compare(0, head.size() + prefix.size(), head + prefix) != 0) break;
        std::string rest = it->substr(head.size());
        if (rest.find(" / ") == std::string::npos) out.push_back(rest);
    }
    return out;
}

bool RunningConfig::has(const ConfigLine& required) const {
    auto parts = resolve(required);
    return !parts.empty() && paths_.count(join(parts)) > 0;
}

std::vector<ConfigLine> missingLines(const RunningConfig& running,
                                     const std::vector<ConfigLine>& required) {
    std::vector<ConfigLine> missing;
    for (const auto& line : required)
        if (!running.has(line)) missing.push_back(line);
    return missing;
}

std::vector<std::string> vtyshAddArgs(const RunningConfig& running, const ConfigLine& line) {
    std::vector<std::string> args{"-c", "configure terminal"};
    for (const auto& c : line.context) {
        if (c == kBgp) {
            auto header = running.bgpRouterHeader();
            if (!header) return {};
            args.insert(args.end(), {"-c", *header});
        } else {
            args.insert(args.end(), {"-c", c});
        }
    }
    args.insert(args.end(), {"-c", line.line});
    return args;
}

std::vector<std::string> vtyshBatchArgs(const RunningConfig& running,
                                        const std::vector<ConfigLine>& lines) {
    std::vector<std::string> args;
    for (const auto& line : lines) {
        auto one = vtyshAddArgs(running, line);
        if (one.empty()) continue;
        args.insert(args.end(), one.begin(), one.end());
        args.insert(args.end(), {"-c", "end"});
    }
    return args;
}

}  // namespace twinrail::frr
