#include "import_auditor.h"

#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "twinrail/common/log.h"

namespace twinrail::hostrouted {
namespace {

// After a restart zebra reads the kernel, then gets its config (import-table) from
// vtysh or watchfrr, which can take seconds: audit often until that has settled.
constexpr auto kBurstStep = std::chrono::seconds(2);
constexpr auto kBurstLength = std::chrono::seconds(30);

std::string listIps(const std::vector<IpAddr>& ips) {
    std::string out;
    for (size_t i = 0; i < ips.size() && i < 5; ++i) out += (i ? ", " : "") + ips[i].str();
    if (ips.size() > 5) out += " and " + std::to_string(ips.size() - 5) + " more";
    return out;
}

}  // namespace

ImportAuditor::ImportAuditor(boost::asio::io_context& io, frr::Channel& frr,
                             netlink::RouteProgrammer& routes,
                             std::unique_ptr<netlink::RouteDumper> dumper, RouteList ours,
                             Done done, AuditMode mode)
    : frr_(frr),
      routes_(routes),
      dumper_(std::move(dumper)),
      ours_(std::move(ours)),
      done_(std::move(done)),
      mode_(std::move(mode)),
      periodic_(io),
      burst_(io) {}

void ImportAuditor::start(std::chrono::seconds interval) {
    interval_ = interval;
    if (interval_.count() == 0) stats_.state = "off";
    armPeriodic();
}

void ImportAuditor::setInterval(std::chrono::seconds interval) {
    if (interval == interval_) return;
    interval_ = interval;
    if (interval_.count() == 0 && burstUntil_ < std::chrono::steady_clock::now())
        stats_.state = "off";
    armPeriodic();
}

void ImportAuditor::stop() {
    periodic_.cancel();
    burst_.cancel();
}

void ImportAuditor::frrRestarted(const std::string& daemon) {
    if (daemon != "zebra" && daemon != "bgpd") return;
    ++stats_.frrRestarts;
    burstUntil_ = std::chrono::steady_clock::now() + kBurstLength;
    attempts_.clear();  // a new zebra deserves new tries
    armBurst();
}

void ImportAuditor::armPeriodic() {
    periodic_.cancel();
    if (interval_.count() == 0) return;
    periodic_.expires_after(interval_);
    periodic_.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        run();
        armPeriodic();
    });
}

void ImportAuditor::armBurst() {
    burst_.expires_after(kBurstStep);
    burst_.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        run();
        if (std::chrono::steady_clock::now() < burstUntil_) armBurst();
    });
}

void ImportAuditor::run() {
    if (running_) return;  // one audit at a time; the next tick catches up
    running_ = true;
    if (mode_.bgpOriginated) {
        // Only the routes this router originates, not the whole BGP table (every remote
        // host of the plane): one read, no summary first.
        frr_.show("show bgp ipv4 unicast self-originate json",
                  [this, alive = std::weak_ptr<int>(alive_)](bool ok, const std::string& text) {
                      if (!alive.expired()) onOriginated(ok, text);
                  });
        return;
    }
    frr_.show("show ip route summary json",
              [this, alive = std::weak_ptr<int>(alive_)](bool ok, const std::string& text) {
                  if (!alive.expired()) onSummary(ok, text);
              });
}

void ImportAuditor::onSummary(bool ok, const std::string& text) {
    if (!ok) return finish("unreachable");
    std::string error;
    auto counts = parseImportCounts(text, error);
    if (!counts) {
        log::warning("FRR audit: ", error);
        return finish("unreachable");
    }
    auto ours = ours_();
    // Every one of ours imported and installed, and nothing else: no need to look closer.
    if (counts->rib == ours.size() && counts->fib == ours.size()) {
        stats_.missing = stats_.shadowed = stats_.outranked = stats_.foreign = 0;
        stats_.unrepaired = 0;
        attempts_.clear();
        return finish("ok");
    }
    // The imports, then the kernel routes (normally few) that could shadow them; not
    // the whole RIB, which on a leaf holds every remote host too.
    std::weak_ptr<int> alive = alive_;
    frr_.show("show ip route table json",
              [this, alive, ours = std::move(ours)](bool ok2, const std::string& imports) mutable {
                  if (alive.expired()) return;
                  if (!ok2) return finish("unreachable");
                  frr_.show("show ip route kernel json", [this, alive, ours = std::move(ours),
                                                          imports](bool ok3, const std::string& k) {
                      if (!alive.expired()) onRoutes(ok3, imports, k, ours);
                  });
              });
}

void ImportAuditor::onRoutes(bool ok, const std::string& imports, const std::string& kernel,
                             const std::vector<OurRoute>& ours) {
    if (!ok) return finish("unreachable");
    std::string error;
    auto zebra = parseZebraRoutes(imports, error);
    auto kernelRoutes = zebra ? parseZebraRoutes(kernel, error) : std::nullopt;
    if (!zebra || !kernelRoutes) {
        log::warning("FRR audit: ", error);
        return finish("unreachable");
    }
    zebra->insert(zebra->end(), kernelRoutes->begin(), kernelRoutes->end());
    std::set<IpAddr> judged, fresh;
    for (const auto& r : ours) (r.fresh ? fresh : judged).insert(r.route.dst);
    ImportAudit audit = auditImports(judged, fresh, *zebra);
    ++stats_.audits;
    stats_.missing = audit.missing.size();
    stats_.shadowed = audit.shadowed.size();
    stats_.outranked = audit.outranked.size();
    stats_.foreign = audit.foreign.size();
    for (auto it = attempts_.begin(); it != attempts_.end();) {  // right again: forget
        bool bad = std::count(audit.missing.begin(), audit.missing.end(), it->first) +
                       std::count(audit.shadowed.begin(), audit.shadowed.end(), it->first) >
                   0;
        it = bad ? std::next(it) : attempts_.erase(it);
    }
    if (!audit.outranked.empty()) {
        log::warning("FRR audit: another FRR route wins over the host route of ",
                     listIps(audit.outranked), " (left alone)");
    }
    if (!audit.foreign.empty()) {
        log::info("FRR audit: zebra imports host routes hostrouted did not write: ",
                  listIps(audit.foreign));
    }
    if (audit.clean()) return conclude(audit);
    if (audit.shadowed.empty()) {
        repair(audit, ours, std::nullopt);
        return conclude(audit);
    }
    // The stale copies a previous zebra left in the main table: read on the loop, the
    // audit (running_) goes on when they are in.
    dumper_->dump(AF_INET, RT_TABLE_MAIN, RTPROT_ZEBRA,
                  [this, alive = std::weak_ptr<int>(alive_), audit, ours](
                      int err, const std::vector<netlink::HostRoute>& stale) {
                      if (alive.expired()) return;
                      if (err != 0) {
                          log::warning("FRR audit: cannot read the main table (",
                                       std::strerror(err), "); the stale copies of ",
                                       listIps(audit.shadowed), " stay until the next audit");
                          repair(audit, ours, std::nullopt);
                      } else {
                          repair(audit, ours, stale);
                      }
                      conclude(audit);
                  });
}

void ImportAuditor::onOriginated(bool ok, const std::string& text) {
    if (!ok) return finish("unreachable");
    std::string error;
    auto originated = parseBgpOriginated(text, error);
    if (!originated) {
        log::warning("FRR audit: ", error);
        return finish("unreachable");
    }
    auto ours = ours_();
    std::set<IpAddr> judged, fresh;
    for (const auto& r : ours) (r.fresh ? fresh : judged).insert(r.route.dst);
    ImportAudit audit = auditOriginated(judged, fresh, *originated);
    ++stats_.audits;
    stats_.missing = audit.missing.size();
    stats_.shadowed = stats_.outranked = 0;
    stats_.foreign = audit.foreign.size();
    std::erase_if(attempts_, [&audit](const auto& kv) {
        return std::find(audit.missing.begin(), audit.missing.end(), kv.first) ==
               audit.missing.end();
    });
    if (!audit.foreign.empty()) {
        log::info("FRR audit: BGP originates host routes hostrouted did not write: ",
                  listIps(audit.foreign));
    }
    if (!audit.missing.empty() && mode_.republish) {
        std::vector<IpAddr> again;
        for (const auto& ip : audit.missing)
            if (mayRepair(ip)) again.push_back(ip);
        log::warning("FRR audit: BGP does not originate ", listIps(audit.missing),
                     "; publishing their ADVERTISE_NETWORK_TABLE rows again");
        stats_.repairs += again.size();
        mode_.republish(again);
    } else if (!audit.missing.empty()) {
        repair(audit, ours, std::nullopt);
    }
    conclude(audit);
}

void ImportAuditor::conclude(const ImportAudit& audit) {
    size_t unrepaired = 0;
    for (const auto& [ip, n] : attempts_) unrepaired += n >= kMaxRepairs;
    stats_.unrepaired = unrepaired;
    finish(audit.clean() ? "ok" : "diverged");
}

bool ImportAuditor::mayRepair(const IpAddr& ip) {
    int& n = attempts_[ip];
    if (n >= kMaxRepairs) return false;
    if (++n == kMaxRepairs) {
        log::error("FRR audit: ", ip.str(), " still not advertised after ", kMaxRepairs,
                   " repairs; check zebra's `ip import-table` and its route-map");
    }
    return true;
}

void ImportAuditor::repair(const ImportAudit& audit, const std::vector<OurRoute>& ours,
                           const std::optional<std::vector<netlink::HostRoute>>& stale) {
    std::map<IpAddr, netlink::HostRoute> byIp;
    for (const auto& r : ours) byIp[r.route.dst] = r.route;
    size_t sent = 0;
    if (!audit.shadowed.empty() && stale) {
        // The stale copy a previous zebra installed. zebra ignores changes to routes with
        // its own protocol number, so take it over first: then zebra sees it go.
        std::set<IpAddr> shadowed(audit.shadowed.begin(), audit.shadowed.end());
        auto ourProto = ours.empty() ? uint8_t{0} : ours.front().route.protocol;
        for (auto r : *stale) {
            if (shadowed.count(r.dst) == 0 || !mayRepair(r.dst)) continue;
            r.protocol = ourProto;
            routes_.submit(netlink::RouteOp::Replace, r);
            routes_.submit(netlink::RouteOp::Remove, r);
            ++sent;
        }
        log::warning("FRR audit: zebra prefers stale kernel copies of ", listIps(audit.shadowed),
                     " (left by a previous zebra) over the imported host routes; removing them");
    }
    for (const auto& ip : audit.missing) {
        auto it = byIp.find(ip);
        if (it == byIp.end() || !mayRepair(ip)) continue;
        // Table 10 only feeds zebra's import, nothing forwards from it: a delete and an
        // add in one batch cost no traffic and make zebra import the route again.
        routes_.submit(netlink::RouteOp::Remove, it->second);
        routes_.submit(netlink::RouteOp::Replace, it->second);
        ++sent;
    }
    if (!audit.missing.empty()) {
        log::warning("FRR audit: zebra lost the import of ", listIps(audit.missing),
                     "; writing them again");
    }
    for (const auto& r : routes_.flush()) {
        if (r.error != 0 && r.error != ESRCH) {
            log::warning("FRR audit: repair of ", r.route.dst.str(),
                         " refused: ", std::strerror(r.error));
        }
    }
    stats_.repairs += sent;
}

void ImportAuditor::finish(const std::string& state) {
    running_ = false;
    if (state == "unreachable" && stats_.state != "unreachable")
        log::warning("FRR audit: cannot read zebra's routes; will retry");
    stats_.state = state;
    if (done_) done_();
}

}  // namespace twinrail::hostrouted
