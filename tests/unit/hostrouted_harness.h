// A real hostrouted Daemon on fakes of every edge it has (tests/fakes), for the unit tests
// of its orchestration: a test seeds the kernel, starts the daemon, plays events in and
// reads what the daemon wrote to each edge.
#pragma once

#include <gtest/gtest.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "daemon.h"
#include "twinrail_fakes/frr.h"
#include "twinrail_fakes/hostrouted_links.h"
#include "twinrail_fakes/hostrouted_prober.h"
#include "twinrail_fakes/kernel.h"
#include "twinrail_fakes/redis.h"
#include "twinrail_fakes/runner.h"

namespace twinrail::hostrouted::fixture {

using namespace std::chrono_literals;
using nlohmann::json;

inline constexpr int kSwp1 = 11;
inline constexpr int kSwp2 = 12;
inline constexpr int kUplink = 20;
inline const MacAddr kOurMac{0x02, 0, 0, 0, 0, 0x01};
inline const MacAddr kHostA{0x02, 0, 0, 0, 0, 0xa1};
inline const MacAddr kHostB{0x02, 0, 0, 0, 0, 0xb1};

inline IpAddr ip(const char* text) {
    return *IpAddr::parse(text);
}

inline netlink::LinkState link(int ifindex, const std::string& name, bool up) {
    netlink::LinkState l;
    l.ifindex = ifindex;
    l.name = name;
    l.adminUp = true;
    l.operUp = up;
    l.mac = kOurMac;
    l.kind = "veth";
    return l;
}

inline netlink::NeighborEntry neighbor(int ifindex, const char* addr, MacAddr mac,
                                       uint16_t state = NUD_REACHABLE) {
    netlink::NeighborEntry n;
    n.ifindex = ifindex;
    n.ip = ip(addr);
    n.mac = mac;
    n.state = state;
    return n;
}

// A directory standing in for /proc/sys: the per-port files hostrouted may write.
class SysctlTree {
  public:
    SysctlTree()
        : root_(std::filesystem::temp_directory_path() /
                ("twinrail-hd-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++))) {
        for (const char* port : {"swp1", "swp2", "uplink"}) {
            write("net/ipv4/conf/" + std::string(port) + "/proxy_arp", "0");
            write("net/ipv6/conf/" + std::string(port) + "/proxy_ndp", "0");
            write("net/ipv4/neigh/" + std::string(port) + "/proxy_delay", "80");
        }
    }
    ~SysctlTree() { std::filesystem::remove_all(root_); }
    SysctlTree(const SysctlTree&) = delete;
    SysctlTree& operator=(const SysctlTree&) = delete;
    std::string root() const { return root_.string(); }
    std::string read(const std::string& rel) const {
        std::ifstream in(root_ / rel);
        std::string v;
        in >> v;
        return v;
    }

  private:
    void write(const std::string& rel, const std::string& value) {
        std::filesystem::create_directories((root_ / rel).parent_path());
        std::ofstream(root_ / rel) << value << "\n";
    }
    std::filesystem::path root_;
    static inline int counter_ = 0;
};

inline json baseConfig() {
    return {
        {"HOSTROUTED",
         {{"global", {{"keepalive", "0"}, {"audit_interval", "0"}, {"frr_audit_interval", "0"}}}}},
        {"HOSTROUTED_INTERFACE", {{"swp1", json::object()}, {"swp2", json::object()}}}};
}

inline Config configOf(const json& doc) {
    auto parsed = parseConfig(doc);
    if (const auto* err = std::get_if<ConfigError>(&parsed)) {
        ADD_FAILURE() << err->str();
        return {};
    }
    return std::get<Config>(parsed);
}

// One daemon and every edge it has, as fakes a test can see into.
class HostroutedHarness : public ::testing::Test {
  protected:
    void startDaemon(const Config& cfg, DaemonOptions options = {}) {
        Edges e;
        e.kernel = [this](netlink::NetlinkObserver& observer) {
            auto k = std::make_unique<fakes::FakeKernel>(observer);
            kernel = k.get();
            seedKernel();
            return k;
        };
        auto r = std::make_unique<fakes::FakeRouteTable>();
        routes = r.get();
        for (const auto& h : leftoverRoutes) routes->routes[h.dst] = h;
        e.routes = std::move(r);
        e.prober = [this](HostProber::SeenHandler seen, std::function<void()> batchEnd) {
            auto p = std::make_unique<fakes::FakeHostProber>(std::move(seen), std::move(batchEnd));
            prober = p.get();
            return p;
        };
        auto f = std::make_unique<fakes::FakeFrr>(io);
        frr = f.get();
        frr->configure({"router bgp 65101"});
        e.frr = std::move(f);
        auto db = std::make_unique<fakes::FakeRedis>(io);
        redis = db.get();
        redis->hashes = seedStateDb;
        e.stateDb = std::move(db);
        auto t = std::make_unique<fakes::FakeRunner>(io);
        tc = t.get();
        e.tc = std::move(t);
        e.policyWriter = [this] {
            auto w = std::make_unique<fakes::FakePolicyWriter>(io);
            writers.push_back(w.get());
            return w;
        };
        e.routeDumper = [this] { return std::make_unique<fakes::FakeRouteDumper>(io, *routes); };
        e.routeFeed = [this](std::set<uint32_t> tables, netlink::RouteFeed::OnChange onChange) {
            auto feed =
                std::make_unique<fakes::FakeRouteFeed>(std::move(tables), std::move(onChange));
            feeds.push_back(feed.get());
            return feed;
        };
        auto l = std::make_unique<fakes::FakeLinkControl>(io, kernel);
        links = l.get();
        e.links = std::move(l);
        e.sysctlRoot = sysctl.root();
        daemon = std::make_unique<Daemon>(io, cfg, options, std::move(e));
        daemon->start();
        settle();
    }
    // Links, addresses and neighbors the kernel holds before the daemon starts.
    virtual void seedKernel() {
        kernel->setLink(link(kSwp1, "swp1", true));
        kernel->setLink(link(kSwp2, "swp2", true));
        kernel->setLink(link(kUplink, "uplink", true));
        kernel->addAddress({kSwp1, *IpPrefix::parse("10.0.1.1/24")});
        kernel->addAddress({kSwp2, *IpPrefix::parse("10.0.2.1/24")});
        for (const auto& n : seedNeighbors) kernel->setNeighbor(n);
    }
    void settle(std::chrono::milliseconds d = 30ms) {
        io.restart();
        io.run_for(d);
    }
    std::optional<std::string> stateField(const std::string& key, const std::string& field) {
        auto h = redis->hashes.find(key);
        if (h == redis->hashes.end()) return std::nullopt;
        auto f = h->second.find(field);
        if (f == h->second.end()) return std::nullopt;
        return f->second;
    }

    void TearDown() override {
        if (daemon) daemon->stop();
        daemon.reset();
    }

    boost::asio::io_context io;
    SysctlTree sysctl;
    std::vector<netlink::NeighborEntry> seedNeighbors;
    std::vector<netlink::HostRoute> leftoverRoutes;
    // STATE_DB as a previous run left it.
    std::map<std::string, std::map<std::string, std::string>> seedStateDb;
    fakes::FakeKernel* kernel = nullptr;
    fakes::FakeRouteTable* routes = nullptr;
    fakes::FakeHostProber* prober = nullptr;
    fakes::FakeFrr* frr = nullptr;
    fakes::FakeRedis* redis = nullptr;
    fakes::FakeRunner* tc = nullptr;
    std::vector<fakes::FakePolicyWriter*> writers;
    std::vector<fakes::FakeRouteFeed*> feeds;  // every route feed made, in order
    fakes::FakeLinkControl* links = nullptr;
    std::unique_ptr<Daemon> daemon;
};

}  // namespace twinrail::hostrouted::fixture
