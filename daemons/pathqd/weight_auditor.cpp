#include "weight_auditor.h"

#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "twinrail/common/log.h"

namespace twinrail::pathqd {

WeightAuditor::WeightAuditor(boost::asio::io_context& io, frr::Channel& frr,
                             std::unique_ptr<ForwardingWeights> source, RouteWriter routeWriter,
                             bool repair, std::chrono::milliseconds soon)
    : frr_(frr),
      source_(std::move(source)),
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
    auto now = std::chrono::steady_clock::now();
    if (running_ && !(reading_ && now - readSince_ > kReadDeadline)) return;
    if (running_) {  // a source that never answered (Redis wedged): read again, say so
        ++stats_.readErrors;
        stats_.state = "unreachable";
        log::warning("weight audit: no answer from ", source_->name(), " in ",
                     kReadDeadline.count(), " s; reading again");
    }
    running_ = reading_ = true;
    readSince_ = now;
    std::weak_ptr<int> alive = alive_;
    uint64_t id = ++readId_;
    source_->read([this, alive, id](ForwardedRead read, const std::string& error) {
        if (alive.expired() || id != readId_) return;  // gone, or a read given up on
        reading_ = false;
        onRead(std::move(read), error);
    });
}

void WeightAuditor::onRead(ForwardedRead read, const std::string& error) {
    if (!error.empty()) {
        running_ = false;
        if (stats_.readErrors++ == 0 || stats_.state != "unreachable") {
            log::warning("weight audit: cannot read the weights in force (", source_->name(),
                         "): ", error.substr(0, 200));
        }
        stats_.state = "unreachable";
        return;
    }
    if (!read.badRows.empty() && read.badRows.size() != stats_.badRows) {
        log::warning("weight audit: ", read.badRows.size(), " unusable row(s) in ", source_->name(),
                     "'s weights, such as ", read.badRows.front().substr(0, 300));
    }
    stats_.badRows = read.badRows.size();
    std::map<std::pair<PortWeights, WeightRule>, Group> byWeights;
    for (auto& r : read.routes) {
        if (r.weights.size() < 2) continue;  // one path: nothing to weigh
        auto& g = byWeights[{r.weights, r.rule}];
        g.forwarded = r.weights;
        g.rule = r.rule;
        g.from = r.from;
        g.routes.push_back(r.dst);
    }
    auto groups = std::make_shared<std::vector<Group>>();
    for (auto& [w, g] : byWeights) groups->push_back(std::move(g));
    if (groups->empty()) {
        running_ = false;
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
    const auto& prefix = g.routes.front();
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
            log::warning("weight audit: cannot read ", grp.routes.front().str(),
                         " from BGP: ", error.substr(0, 200));
        }
        stats_.state = "unreachable";
        return;
    }
    auto implied = expectedWeights(source_->frrWeightsOf(*paths), grp.rule);
    if (!paths->empty() && !weightsAgree(implied, grp.forwarded)) {
        bool repair = repair_ && source_->kernelRepairable();
        ++result->divergedGroups;
        result->divergedPrefixes += grp.routes.size();
        log::warning("weight audit: ", grp.routes.size(), " route(s) such as ",
                     grp.routes.front().str(), " forward with ", describeWeights(grp.forwarded),
                     grp.from == "kernel" ? "" : " (" + grp.from + ")",
                     " but BGP's link bandwidths imply ", describeWeights(implied),
                     repair ? "; deleting them so zebra reinstalls" : "");
        if (repair) repairGroup(grp);
        result->repairs = stats_.repairs;
    }
    result->errors = stats_.errors;
    result->readErrors = stats_.readErrors;
    result->badRows = stats_.badRows;
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
    for (const auto& dst : g.routes) {
        netlink::HostRoute victim{dst.addr, 0, 254 /*main*/, 186 /*bgp*/};
        victim.prefixLen = dst.length;
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
