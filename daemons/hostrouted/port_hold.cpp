#include "port_hold.h"

#include <linux/rtnetlink.h>

#include <algorithm>

namespace twinrail::hostrouted {

PortHold::PortHold(HoldSettings settings, TimePoint now)
    : settings_(std::move(settings)),
      holding_(enabled()),
      holdSince_(now),
      holdReason_("start-up: waiting for the fabric prefixes") {}

void PortHold::setSettings(HoldSettings settings, TimePoint now) {
    if (settings == settings_) return;
    bool wasOn = enabled();
    settings_ = std::move(settings);
    // Only the listed prefixes count: a prefix dropped from the list no longer does.
    std::set<IpPrefix> still;
    for (const auto& p : settings_.prefixes)
        if (present_.count(p) != 0) still.insert(p);
    present_ = std::move(still);
    // Turned on while running: the leaf is judged by the routes it has now (decide()
    // holds it if it has none of them), not held as at start-up.
    if (!wasOn && enabled()) holding_ = false;
    if (!enabled()) holding_ = false;
    (void)now;
}

void PortHold::setPresent(std::set<IpPrefix> present, std::optional<bool> fabricRoutes) {
    present_ = std::move(present);
    fabricRoutes_ = fabricRoutes.value_or(!present_.empty()) || !present_.empty();
}

void PortHold::portSeen(const std::string& name, bool adminUp, TimePoint now) {
    auto [it, added] = ports_.try_emplace(name);
    PortView& p = it->second;
    p.adminUp = adminUp;
    if (added && adopted_.erase(name) > 0) {
        // Raised by someone while no hostrouted ran: it is not ours any more.
        p.ours = !adminUp;
        if (p.ours) records_[name] = HoldRecord{true, "held by a previous run", now};
    }
}

void PortHold::portGone(const std::string& name) {
    ports_.erase(name);
    records_.erase(name);
}

void PortHold::adopt(const std::string& name) {
    auto it = ports_.find(name);
    if (it == ports_.end()) {
        adopted_.insert(name);
        return;
    }
    if (it->second.adminUp || it->second.ours) return;
    it->second.ours = true;
    records_[name] = HoldRecord{true, "held by a previous run", TimePoint{}};
}

std::vector<IpPrefix> PortHold::missing() const {
    std::vector<IpPrefix> out;
    for (const auto& p : settings_.prefixes)
        if (present_.count(p) == 0) out.push_back(p);
    return out;
}

std::string PortHold::missingText() const {
    std::string out;
    for (const auto& p : missing()) out += (out.empty() ? "" : ", ") + p.str();
    return out;
}

HoldDecision PortHold::decide(TimePoint now) {
    HoldDecision d;
    const size_t total = settings_.prefixes.size();
    const size_t have = total - missing().size();
    const bool first = !decided_;
    decided_ = true;
    if (enabled() && holding_) {
        if (first && fabricRoutes_ && have < total) {
            // The first view already has fabric routes: a hostrouted restarted on a running
            // leaf, whose hosts must not go down for a remote leaf that is missing.
            holding_ = false;
            d.warning = true;
            d.transition = "in the fabric at start-up (" + std::to_string(have) + " of " +
                           std::to_string(total) + " fabric prefixes); missing: " + missingText();
        } else if (have == total) {
            holding_ = false;
            d.transition = "all " + std::to_string(total) + " fabric prefixes present";
        } else if (have > 0 && now - holdSince_ >= settings_.maxHold) {
            holding_ = false;
            d.warning = true;
            d.transition = std::to_string(have) + " of " + std::to_string(total) +
                           " fabric prefixes present after hold_max_s (" +
                           std::to_string(settings_.maxHold.count()) +
                           " s); still missing: " + missingText();
        }
    } else if (enabled() && have == 0 && !fabricRoutes_) {
        holding_ = true;
        holdSince_ = now;
        holdReason_ = "isolated: none of the " + std::to_string(total) + " fabric prefixes";
        d.warning = true;
        d.transition = holdReason_;
    }
    if (!enabled() && d.transition.empty() && !records_.empty()) {
        for (const auto& [name, p] : ports_) {
            if (p.ours) {
                d.transition = "fabric_prefixes cleared: the hold is off";
                break;
            }
        }
    }
    const std::string releaseReason = d.transition.empty() ? "released" : d.transition;
    for (auto& [name, p] : ports_) {
        if (holding_) {
            if (p.adminUp) {
                // As the write leaves it: the kernel's event saying so comes later.
                p.adminUp = false;
                p.ours = true;
                d.actions.push_back({name, HoldActionKind::Lower, holdReason_});
            } else {
                // Down before the hold began: the operator's (or a previous run's, which
                // adopt() already made ours). Whoever took it down raises it, not the hold.
                continue;
            }
            records_[name] = HoldRecord{true, holdReason_, now};
            continue;
        }
        if (!p.ours) continue;
        p.ours = false;
        d.actions.push_back(
            {name, p.adminUp ? HoldActionKind::Record : HoldActionKind::Raise, releaseReason});
        p.adminUp = true;
        records_[name] = HoldRecord{false, releaseReason, now};
    }
    return d;
}

std::optional<TimePoint> PortHold::nextDeadline() const {
    if (!enabled() || !holding_) return std::nullopt;
    return holdSince_ + settings_.maxHold;
}

FabricView fabricView(const netlink::RouteFeed::Routes& routes, const std::vector<IpPrefix>& wanted,
                      const std::set<int>& fabricPorts) {
    FabricView view;
    auto viaFabric = [&fabricPorts](const netlink::KernelRoute& r) {
        return r.type == RTN_UNICAST &&
               std::any_of(r.nexthops.begin(), r.nexthops.end(), [&fabricPorts](const auto& nh) {
                   return fabricPorts.count(nh.ifindex) != 0;
               });
    };
    for (const auto& prefix : wanted) {
        const auto entries = netlink::entriesOf(routes, RT_TABLE_MAIN, prefix);
        if (std::any_of(entries.begin(), entries.end(),
                        [&viaFabric](const netlink::KernelRoute* r) { return viaFabric(*r); }))
            view.present.insert(prefix);
    }
    view.anyRoute = !view.present.empty();
    for (auto it = routes.begin(); !view.anyRoute && it != routes.end(); ++it) {
        const auto& r = it->second;
        view.anyRoute = r.table == RT_TABLE_MAIN && r.protocol != RTPROT_KERNEL && viaFabric(r);
    }
    return view;
}

}  // namespace twinrail::hostrouted
