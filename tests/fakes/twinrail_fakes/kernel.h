// Fakes of the kernel edges (libs/netlink): links, addresses and neighbors played into an
// observer; a route table and a policy writer that record what was written and hold the
// result; a route dumper reading that table; a route feed a test edits. What they promise
// is what the real edges promise (each has a namespace contract test in
// tests/integration/netlink_it.cpp): in particular, what the real ones answer later on the
// io_context (route and rule dumps), these post on it too, never answering inside the call.
#pragma once

#include <linux/neighbour.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "twinrail/netlink/monitor.h"
#include "twinrail/netlink/policy_writer.h"
#include "twinrail/netlink/route_table.h"
#include "twinrail/netlink/route_watch.h"

namespace twinrail::fakes {

// The kernel's links, addresses, bridge FDB and neighbors. A test edits them (setLink,
// setNeighbor...); each edit is delivered to the observer as an event followed by onBurstEnd, and a
// snapshot replays the whole state between onSnapshotBegin and onSnapshotEnd. start()
// delivers the first snapshot before it returns, as NetlinkMonitor does. Snapshots
// requested later are only recorded: like NetlinkMonitor's, they reach the observer after
// requestSnapshot returned, here when the test calls runSnapshots() (the real one also
// coalesces requests made while one runs into one more), or aborted half-way (abortNext)
// as a dump that races the kernel is.
class FakeKernel final : public netlink::KernelEvents {
  public:
    explicit FakeKernel(netlink::NetlinkObserver& observer) : observer_(observer) {}

    void start() override {
        started_ = true;
        snapshotNow();
    }
    void requestSnapshot(const std::string& reason) override { requested_.push_back(reason); }
    const netlink::MonitorStats& stats() const override { return stats_; }

    // The snapshot reasons asked for and not yet run.
    const std::vector<std::string>& requested() const { return requested_; }
    void runSnapshots() {
        auto todo = std::exchange(requested_, {});
        for (size_t i = 0; i < todo.size(); ++i) snapshotNow();
    }
    // The next snapshot delivers links and addresses, then aborts before the neighbors.
    void abortNextSnapshot() { abortNext_ = true; }

    void setLink(const netlink::LinkState& link) {
        links_[link.ifindex] = link;
        event([this, link] { observer_.onLink(link, false); });
    }
    void removeLink(int ifindex) {
        auto it = links_.find(ifindex);
        if (it == links_.end()) return;
        auto link = it->second;
        links_.erase(it);
        event([this, link] { observer_.onLink(link, true); });
    }
    void addAddress(const netlink::AddressEntry& a) {
        addresses_.push_back(a);
        event([this, a] { observer_.onAddress(a, false); });
    }
    void setNeighbor(const netlink::NeighborEntry& n) {
        neighbors_[{n.ifindex, n.ip}] = n;
        event([this, n] { observer_.onNeighbor(n, false); });
    }
    void removeNeighbor(int ifindex, const IpAddr& ip) {
        auto it = neighbors_.find({ifindex, ip});
        if (it == neighbors_.end()) return;
        auto n = it->second;
        neighbors_.erase(it);
        event([this, n] { observer_.onNeighbor(n, true); });
    }
    // Bridge FDB entries (MAC -> bridge port), keyed by bridge, VLAN and MAC as the kernel's
    // are (VLAN 0: a VLAN-unaware bridge's entry).
    void setFdb(const netlink::FdbEntry& f) {
        fdb_[{f.master, f.vlan, f.mac}] = f;
        event([this, f] { observer_.onFdb(f, false); });
    }
    void removeFdb(int master, const MacAddr& mac, uint16_t vlan = 0) {
        auto it = fdb_.find({master, vlan, mac});
        if (it == fdb_.end()) return;
        auto f = it->second;
        fdb_.erase(it);
        event([this, f] { observer_.onFdb(f, true); });
    }
    // A bridge port's VLAN list (AF_BRIDGE RTM_NEWLINK), as the kernel sends it after
    // `bridge vlan add|del`; replayed in snapshots after the links, as NetlinkMonitor's
    // bridge-port dump is.
    void setPortVlans(const netlink::PortVlans& p) {
        portVlans_[p.ifindex] = p;
        event([this, p] { observer_.onPortVlans(p); });
    }
    // A change the event stream lost (ENOBUFS): only a snapshot shows it.
    void setNeighborSilently(const netlink::NeighborEntry& n) { neighbors_[{n.ifindex, n.ip}] = n; }
    void removeNeighborSilently(int ifindex, const IpAddr& ip) { neighbors_.erase({ifindex, ip}); }

    void snapshotNow() {
        ++stats_.snapshots;
        observer_.onSnapshotBegin();
        for (const auto& [i, l] : links_) observer_.onLink(l, false);
        for (const auto& [i, p] : portVlans_) observer_.onPortVlans(p);
        for (const auto& a : addresses_) observer_.onAddress(a, false);
        if (abortNext_) {
            abortNext_ = false;
            ++stats_.snapshotsAborted;
            observer_.onSnapshotAborted();
            observer_.onBurstEnd();
            return;
        }
        // As NetlinkMonitor with bridgeFdb: the FDB before the neighbors.
        for (const auto& [k, f] : fdb_) observer_.onFdb(f, false);
        for (const auto& [k, n] : neighbors_) observer_.onNeighbor(n, false);
        observer_.onSnapshotEnd();
        observer_.onBurstEnd();
    }
    bool started() const { return started_; }
    const netlink::LinkState* linkNamed(const std::string& name) const {
        for (const auto& [i, l] : links_)
            if (l.name == name) return &l;
        return nullptr;
    }

  private:
    void event(const std::function<void()>& deliver) {
        if (!started_) return;
        ++stats_.messages;
        deliver();
        observer_.onBurstEnd();
    }

    netlink::NetlinkObserver& observer_;
    std::map<int, netlink::LinkState> links_;
    std::vector<netlink::AddressEntry> addresses_;
    std::map<std::pair<int, IpAddr>, netlink::NeighborEntry> neighbors_;
    std::map<std::tuple<int, uint16_t, MacAddr>, netlink::FdbEntry> fdb_;
    std::map<int, netlink::PortVlans> portVlans_;
    std::vector<std::string> requested_;
    netlink::MonitorStats stats_;
    bool started_ = false;
    bool abortNext_ = false;
};

// A kernel route table: what flush() applied, by destination; errors a test sets.
class FakeRouteTable final : public netlink::RouteProgrammer {
  public:
    void submit(netlink::RouteOp op, const netlink::HostRoute& route) override {
        pending_.emplace_back(op, route);
    }
    std::vector<netlink::RouteResult> flush() override {
        std::vector<netlink::RouteResult> out;
        for (auto& [op, r] : std::exchange(pending_, {})) {
            int err = 0;
            if (auto e = failNext.find(r.dst); e != failNext.end()) {
                err = e->second;
            } else if (op == netlink::RouteOp::Replace) {
                routes[r.dst] = r;
            } else if (routes.erase(r.dst) == 0) {
                err = ESRCH;
            }
            ++writes;
            out.push_back({op, r, err});
        }
        return out;
    }
    std::vector<netlink::HostRoute> dump(int family, uint32_t table, uint8_t protocol) override {
        std::vector<netlink::HostRoute> out;
        for (const auto& [ip, r] : routes) {
            bool v4 = family == AF_INET;
            if (ip.isV4() == v4 && r.table == table && r.protocol == protocol) out.push_back(r);
        }
        return out;
    }
    // The interface a destination is routed out of, 0 when it is not routed.
    int routedVia(const IpAddr& ip) const {
        auto it = routes.find(ip);
        return it == routes.end() ? 0 : it->second.ifindex;
    }

    std::map<IpAddr, netlink::HostRoute> routes;
    std::map<IpAddr, int> failNext;  // destination -> errno every write of it gets
    size_t writes = 0;

  private:
    std::vector<std::pair<netlink::RouteOp, netlink::HostRoute>> pending_;
};

// Host routes of a FakeRouteTable, dumped as KernelRouteDumper does: the answer is
// posted on the io_context (held back while `hold` is set, until release()), or the
// error a test sets in failNext (once per dump).
class FakeRouteDumper final : public netlink::RouteDumper {
  public:
    FakeRouteDumper(boost::asio::io_context& io, FakeRouteTable& table) : io_(io), table_(table) {}

    void dump(int family, uint32_t table, uint8_t protocol, Done done) override {
        ++dumps;
        int error = 0;
        std::vector<netlink::HostRoute> routes;
        if (failNext > 0) {
            --failNext;
            error = failError;
        } else {
            routes = table_.dump(family, table, protocol);
        }
        held_.push_back(
            [done = std::move(done), error, routes = std::move(routes)] { done(error, routes); });
        if (!hold) release();
    }
    // Posts the answers held back.
    void release() {
        for (auto& answer : std::exchange(held_, {})) boost::asio::post(io_, std::move(answer));
    }
    size_t heldBack() const { return held_.size(); }

    int failNext = 0;  // the next this many dumps answer failError
    int failError = EIO;
    bool hold = false;
    size_t dumps = 0;

  private:
    boost::asio::io_context& io_;
    FakeRouteTable& table_;
    std::vector<std::function<void()>> held_;
};

// Policy routes, rules and static neighbors as the kernel would hold them after flush().
// Rule dumps are answered on the io_context, as KernelPolicyWriter's are (held back while
// `hold` is set, until release()); failDumps makes the next ones fail.
class FakePolicyWriter final : public netlink::PolicyWriter {
  public:
    explicit FakePolicyWriter(boost::asio::io_context& io) : io_(io) {}

    void submit(netlink::PolicyOp op) override { pending_.push_back(std::move(op)); }
    std::vector<netlink::PolicyResult> flush() override {
        std::vector<netlink::PolicyResult> out;
        for (auto& op : std::exchange(pending_, {})) {
            apply(op);
            out.push_back({op, 0});
            ops.push_back(std::move(op));
        }
        return out;
    }
    void dumpRules(int family, uint8_t protocol, RulesDone done) override {
        ++ruleDumps;
        int error = 0;
        std::vector<netlink::PolicyRule> out;
        if (failDumps > 0) {
            --failDumps;
            error = failError;
        } else {
            for (const auto& r : rules)
                if (r.family == family && r.protocol == protocol) out.push_back(r);
        }
        held_.push_back(
            [done = std::move(done), error, out = std::move(out)] { done(error, out); });
        if (!hold) release();
    }
    // Posts the rule dumps' answers held back.
    void release() {
        for (auto& answer : std::exchange(held_, {})) boost::asio::post(io_, std::move(answer));
    }
    size_t heldBack() const { return held_.size(); }

    std::set<netlink::PolicyRule> rules;
    std::vector<netlink::KernelRoute> routes;
    std::set<netlink::StaticNeighbor> neighbors;
    std::vector<netlink::PolicyOp> ops;  // every operation flushed, in order
    int failDumps = 0;                   // the next this many rule dumps answer failError
    int failError = EIO;
    bool hold = false;
    size_t ruleDumps = 0;

  private:
    boost::asio::io_context& io_;
    std::vector<std::function<void()>> held_;
    void apply(const netlink::PolicyOp& op) {
        using K = netlink::PolicyOp;
        auto sameRoute = [&op](const netlink::KernelRoute& r) {
            return r.table == op.route.table && r.dst == op.route.dst &&
                   r.metric == op.route.metric;
        };
        switch (op.kind) {
            case K::ReplaceRoute:
                std::erase_if(routes, sameRoute);
                routes.push_back(op.route);
                break;
            case K::RemoveRoute:
                std::erase_if(routes, sameRoute);
                break;
            case K::AddRule:
                rules.insert(op.rule);
                break;
            case K::RemoveRule:
                rules.erase(op.rule);
                break;
            case K::ReplaceNeighbor:
                std::erase_if(neighbors, [&op](const netlink::StaticNeighbor& n) {
                    return n.fdb == op.neighbor.fdb && n.ifindex == op.neighbor.ifindex &&
                           (n.fdb ? n.mac == op.neighbor.mac : n.ip == op.neighbor.ip);
                });
                neighbors.insert(op.neighbor);
                break;
            case K::RemoveNeighbor:
                std::erase_if(neighbors, [&op](const netlink::StaticNeighbor& n) {
                    return n.fdb == op.neighbor.fdb && n.ifindex == op.neighbor.ifindex &&
                           (n.fdb ? n.mac == op.neighbor.mac : n.ip == op.neighbor.ip);
                });
                break;
        }
    }
    std::vector<netlink::PolicyOp> pending_;
};

// Routes of some tables, as a test sets them; a change is announced through OnChange.
class FakeRouteFeed final : public netlink::RouteFeed {
  public:
    FakeRouteFeed(std::set<uint32_t> tables, OnChange onChange)
        : tables_(std::move(tables)), onChange_(std::move(onChange)) {}
    void start() override {
        synced_ = true;
        onChange_({}, true);
    }
    void stop() override { stopped = true; }
    void setTables(std::set<uint32_t> tables) override {
        if (tables == tables_) return;  // as RouteWatch: no new snapshot
        tables_ = std::move(tables);
        onChange_({}, true);
    }
    void resync() override { onChange_({}, true); }
    bool synced() const override { return synced_; }
    const Routes& routes() const override { return routes_; }
    const netlink::RouteWatchStats& stats() const override { return stats_; }

    const std::set<uint32_t>& tables() const { return tables_; }
    void set(const netlink::KernelRoute& r) {
        routes_[netlink::keyOf(r)] = r;
        onChange_({netlink::keyOf(r)}, false);
    }
    void remove(const netlink::KernelRoute& r) {
        routes_.erase(netlink::keyOf(r));
        onChange_({netlink::keyOf(r)}, false);
    }
    bool stopped = false;

  private:
    std::set<uint32_t> tables_;
    OnChange onChange_;
    Routes routes_;
    netlink::RouteWatchStats stats_;
    bool synced_ = false;
};

}  // namespace twinrail::fakes
