#include "weight_auditor.h"

#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "twinrail/common/log.h"

namespace twinrail::pathqd {

WeightAuditor::WeightAuditor(boost::asio::io_context& io, frr::Channel& frr, Routes routes,
                             IfName ifname, RouteWriter routeWriter, bool repair,
                             std::chrono::milliseconds soon)
    : frr_(frr),
      routes_(std::move(routes)),
      ifname_(std::move(ifname)),
      routeWriter_(std::move(routeWriter)),
      repair_(repair),
      soon_(soon),
      timer_(io) {}

void WeightAuditor::start(std::chrono::seconds interval) {
    interval_ = interval;
    if (interval_.count() == 0) {
        stats_.state = "off";
        return;
    }
    arm(interval_);
}

void WeightAuditor::setInterval(std::chrono::seconds interval) {
    if (interval == interval_) return;
    interval_ = interval;
    timer_.cancel();
    if (interval_.count() == 0) {
        stats_.state = "off";
        return;
    }
    arm(interval_);
}

void WeightAuditor::runSoon() {
    if (interval_.count() > 0) arm(soon_);  // once FRR has re-formed
}

void WeightAuditor::stop() {
    timer_.cancel();
}

void WeightAuditor::arm(std::chrono::milliseconds after) {
    timer_.expires_after(after);
    timer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        round();
        arm(interval_);
    });
}

void WeightAuditor::round() {
    if (running_) return;
    std::map<PortWeights, Group> byWeights;
    for (const auto& r : routes_()) {
        if (r.nexthops.size() < 2) continue;  // one path: nothing to weigh
        PortWeights w;
        for (const auto& nh : r.nexthops) w[ifname_(nh.ifindex)] += nh.weight;
        auto& g = byWeights[w];
        g.kernel = w;
        g.routes.push_back(&r);
    }
    auto groups = std::make_shared<std::vector<Group>>();
    for (auto& [w, g] : byWeights) groups->push_back(std::move(g));
    if (groups->empty()) {
        stats_.divergedGroups = stats_.divergedPrefixes = 0;
        stats_.state = "ok";
        ++stats_.rounds;
        return;
    }
    // At most kMaxLookups groups per round, continuing where the last round stopped.
    if (groups->size() > kMaxLookups) {
        std::rotate(groups->begin(), groups->begin() + static_cast<long>(offset_ % groups->size()),
                    groups->end());
        offset_ += kMaxLookups;
        groups->resize(kMaxLookups);
    }
    running_ = true;
    checkNext(groups, 0, std::make_shared<WeightAuditStats>(stats_));
}

void WeightAuditor::checkNext(const std::shared_ptr<std::vector<Group>>& groups, size_t next,
                              const std::shared_ptr<WeightAuditStats>& result) {
    if (next == groups->size()) {
        running_ = false;
        ++result->rounds;
        result->state = result->divergedGroups > 0 ? "diverged" : "ok";
        stats_ = *result;
        return;
    }
    if (next == 0) result->divergedGroups = result->divergedPrefixes = 0;
    const Group& g = (*groups)[next];
    const auto& prefix = g.routes.front()->dst;
    std::string afi = prefix.addr.isV4() ? "ipv4" : "ipv6";
    ++result->lookups;
    std::weak_ptr<int> alive = alive_;
    frr_.show("show bgp " + afi + " unicast " + prefix.str() + " json",
              [this, alive, groups, next, result](bool ok, const std::string& text) {
                  if (!alive.expired()) onLookup(groups, next, result, ok, text);
              });
}

void WeightAuditor::onLookup(const std::shared_ptr<std::vector<Group>>& groups, size_t next,
                             const std::shared_ptr<WeightAuditStats>& result, bool ok,
                             const std::string& text) {
    const Group& grp = (*groups)[next];
    std::string error = ok ? "" : text;
    auto paths = ok ? parseBgpMultipaths(text, error) : std::nullopt;
    if (!paths) {
        running_ = false;
        if (stats_.errors++ == 0 || stats_.state != "unreachable") {
            log::warning("weight audit: cannot read ", grp.routes.front()->dst.str(),
                         " from BGP: ", error.substr(0, 200));
        }
        stats_.state = "unreachable";
        return;
    }
    auto implied = impliedWeights(*paths);
    if (!paths->empty() && !weightsAgree(implied, grp.kernel)) {
        ++result->divergedGroups;
        result->divergedPrefixes += grp.routes.size();
        log::warning("weight audit: ", grp.routes.size(), " route(s) such as ",
                     grp.routes.front()->dst.str(), " forward with ", describeWeights(grp.kernel),
                     " but BGP's link bandwidths imply ", describeWeights(implied),
                     repair_ ? "; deleting them so zebra reinstalls" : "");
        if (repair_) repairGroup(grp);
        result->repairs = stats_.repairs;
    }
    result->errors = stats_.errors;
    checkNext(groups, next + 1, result);
}

void WeightAuditor::repairGroup(const Group& g) {
    std::unique_ptr<netlink::RouteProgrammer> table;
    try {
        table = routeWriter_ ? routeWriter_() : nullptr;
    } catch (const std::exception& e) {
        log::warning("weight audit: cannot reach the kernel route table: ", e.what());
    }
    if (!table) return;
    for (const auto* r : g.routes) {
        netlink::HostRoute victim{r->dst.addr, 0, 254 /*main*/, 186 /*bgp*/};
        victim.prefixLen = r->dst.length;
        table->submit(netlink::RouteOp::Remove, victim);
    }
    for (const auto& res : table->flush()) {
        if (res.error == 0) {
            ++stats_.repairs;
        } else {
            log::warning("weight audit: cannot delete ", res.route.dst.str(), ": ",
                         std::strerror(res.error), " (repair needs CAP_NET_ADMIN)");
        }
    }
}

}  // namespace twinrail::pathqd
