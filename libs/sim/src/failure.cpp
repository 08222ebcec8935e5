#include "twinrail/sim/failure.h"

#include <charconv>

namespace twinrail::sim {
namespace {

std::vector<std::string> splitColons(const std::string& s) {
    std::vector<std::string> out{""};
    for (char c : s) {
        if (c == ':') {
            out.emplace_back();
        } else {
            out.back() += c;
        }
    }
    return out;
}

// "p1-leaf1/uplink3" -> the leaf's third uplink's port key; other names as given.
std::string resolvePortKey(const Fabric& f, const std::string& what) {
    auto slash = what.find('/');
    if (slash == std::string::npos) return what;
    std::string sw = what.substr(0, slash), port = what.substr(slash + 1);
    if (port.rfind("uplink", 0) != 0 || port.size() == 6) return what;
    auto id = f.switchIds.find(sw);
    if (id == f.switchIds.end()) return what;
    int n = 0;
    auto [end, ec] = std::from_chars(port.data() + 6, port.data() + port.size(), n);
    if (ec != std::errc() || end != port.data() + port.size()) return what;
    const auto& node = f.switches[static_cast<size_t>(id->second)];
    if (n < 1 || static_cast<size_t>(n) > node.uplinks.size()) return what;
    int link = node.uplinks[static_cast<size_t>(n - 1)];
    for (const auto& [key, links] : f.portLinks)
        if (links.first == link) return key;
    return what;
}

void switchDown(Fabric& f, int id) {
    f.switches[static_cast<size_t>(id)].up = false;
    for (auto& link : f.links)
        if (link.from == id || link.to == id) link.up = false;
    for (auto& port : f.nicPorts)
        if (port.leaf == id) port.up = false;
}

}  // namespace

std::variant<Failure, std::string> parseFailure(const std::string& spec) {
    auto parts = splitColons(spec);
    auto bad = [&](const std::string& why) { return "--fail " + spec + ": " + why; };
    Failure f;
    const std::string& kind = parts[0];
    if (kind == "link") {
        f.kind = Failure::Kind::Link;
    } else if (kind == "degrade") {
        f.kind = Failure::Kind::Degrade;
    } else if (kind == "spine") {
        f.kind = Failure::Kind::Spine;
    } else if (kind == "leaf") {
        f.kind = Failure::Kind::Leaf;
    } else if (kind == "nicport") {
        f.kind = Failure::Kind::NicPort;
    } else {
        return bad("kind \"" + kind + "\" is not link, degrade, spine, leaf or nicport");
    }
    if (parts.size() < 2 || parts[1].empty()) return bad("no switch, port or NIC port named");
    f.what = parts[1];
    bool degrade = f.kind == Failure::Kind::Degrade;
    if (parts.size() != (degrade ? 3u : 2u)) {
        return bad(degrade ? "expected degrade:SWITCH/PORT:FRACTION"
                           : "expected KIND:WHAT (only degrade takes a fraction)");
    }
    if (degrade) {
        const std::string& text = parts[2];
        double v = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || end != text.data() + text.size() || !(v > 0 && v < 1))
            return bad("fraction \"" + text + "\" is not a number between 0 and 1 (exclusive)");
        f.fraction = v;
    }
    bool wantsPort = f.kind == Failure::Kind::Link || degrade;
    if (wantsPort && f.what.find('/') == std::string::npos)
        return bad("\"" + f.what + "\" is not SWITCH/PORT");
    return f;
}

std::variant<std::monostate, std::string> applyFailure(Fabric& fabric, const Failure& failure) {
    using K = Failure::Kind;
    if (failure.kind == K::Spine || failure.kind == K::Leaf) {
        auto id = fabric.switchIds.find(failure.what);
        bool spine = failure.kind == K::Spine;
        if (id == fabric.switchIds.end() ||
            fabric.switches[static_cast<size_t>(id->second)].spine != spine) {
            return std::string("--fail: ") + (spine ? "spine " : "leaf ") + failure.what +
                   " is not in the plan";
        }
        switchDown(fabric, id->second);
        return std::monostate{};
    }
    if (failure.kind == K::NicPort) {
        auto id = fabric.nicPortIds.find(failure.what);
        if (id == fabric.nicPortIds.end())
            return "--fail: NIC port " + failure.what + " is not in the plan (SRV/NIC/PORT)";
        auto& port = fabric.nicPorts[static_cast<size_t>(id->second)];
        port.up = false;
        fabric.links[static_cast<size_t>(port.toLeaf)].up = false;
        fabric.links[static_cast<size_t>(port.fromLeaf)].up = false;
        return std::monostate{};
    }
    auto links = fabric.portLinks.find(resolvePortKey(fabric, failure.what));
    if (links == fabric.portLinks.end())
        return "--fail: port " + failure.what + " is not a linked switch port of the plan";
    auto& egress = fabric.links[static_cast<size_t>(links->second.first)];
    if (failure.kind == K::Degrade) {
        egress.capacityGbps = egress.nominalGbps * failure.fraction;
        return std::monostate{};
    }
    egress.up = false;
    fabric.links[static_cast<size_t>(links->second.second)].up = false;
    // A NIC port whose cable is gone is down for the NIC's bond too.
    for (auto& port : fabric.nicPorts) {
        if (port.fromLeaf == links->second.first || port.toLeaf == links->second.first)
            port.up = false;
    }
    return std::monostate{};
}

}  // namespace twinrail::sim
