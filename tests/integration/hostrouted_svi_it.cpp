// hostrouted on SONiC's kernel shape, for real: a bridge `Vlan1001` (the SVI) whose member
// veths `Ethernet0` and `Ethernet8` lead to a host each. Both hosts become /32s through the
// SVI; taking a member down withdraws its host at once (the time is measured and printed)
// and leaves the other; with platform sonic the SVI's settings that intfmgrd owns are
// exactly as "intfmgrd" (this test) left them. No FRR and no Redis: the kernel side only.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <thread>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "twinrail/lab/fabric.h"
#include "twinrail/lab/process.h"
#include "twinrail/lab/shell.h"
#include "twinrail/netlink/monitor.h"

namespace twinrail::it {
namespace {

using namespace std::chrono_literals;
using lab::waitUntil;

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

// What intfmgrd owns on an SVI (and the MAC), read from inside the switch.
const char* kSonicOwned[] = {"/proc/sys/net/ipv4/conf/Vlan1001/proxy_arp",
                             "/proc/sys/net/ipv4/conf/Vlan1001/proxy_arp_pvlan",
                             "/proc/sys/net/ipv4/conf/Vlan1001/arp_accept",
                             "/proc/sys/net/ipv6/conf/Vlan1001/proxy_ndp",
                             "/sys/class/net/Vlan1001/address"};

class HostroutedSviIt : public ::testing::Test {
  protected:
    void SetUp() override {
        if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
        fabric_ = std::make_unique<lab::Fabric>("tsv" + std::to_string(getpid()));
        dir_ = "/tmp/" + fabric_->prefix() + "-svi";
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
        for (const char* node : {"sw", "h0", "h8"}) fabric_->addNode(node);
        fabric_->link("sw", "Ethernet0", "h0", "eth0");
        fabric_->link("sw", "Ethernet8", "h8", "eth0");
        fabric_->runAllOk("sw", {{"ip", "link", "add", "Vlan1001", "type", "bridge"},
                                 {"ip", "link", "set", "Ethernet0", "master", "Vlan1001"},
                                 {"ip", "link", "set", "Ethernet8", "master", "Vlan1001"},
                                 {"ip", "link", "set", "Vlan1001", "up"},
                                 {"ip", "addr", "add", "10.1.0.1/24", "dev", "Vlan1001"},
                                 // intfmgrd's part for VLAN_INTERFACE|Vlan1001 proxy_arp enabled
                                 {"sysctl", "-qw", "net.ipv4.conf.Vlan1001.proxy_arp=1",
                                  "net.ipv4.conf.Vlan1001.proxy_arp_pvlan=1",
                                  "net.ipv4.conf.Vlan1001.arp_accept=1"}});
        for (auto [host, addr] : {std::pair{"h0", "10.1.0.10/24"}, std::pair{"h8", "10.1.0.18/24"}})
            fabric_->runAllOk(host, {{"ip", "addr", "add", addr, "dev", "eth0"}});
    }

    void TearDown() override {
        daemon_.reset();  // hostrouted stops before its namespace goes
        fabric_.reset();
        if (!HasFailure()) std::filesystem::remove_all(dir_);
    }

    std::map<std::string, std::string> sonicOwned() const {
        std::map<std::string, std::string> out;
        for (const char* path : kSonicOwned) out[path] = fabric_->run("sw", {"cat", path}).out;
        return out;
    }
    std::string table10() const {
        return fabric_->run("sw", {"ip", "route", "show", "table", "10"}).out;
    }
    void hostSpeaks(const char* host) { fabric_->run(host, {"ping", "-c1", "-W1", "10.1.0.1"}); }

    std::unique_ptr<lab::Fabric> fabric_;
    std::string dir_;
    std::unique_ptr<lab::ChildProcess> daemon_;
};

TEST_F(HostroutedSviIt, HostsBehindMembersAreRoutedAndAMemberDownWithdrawsItsHostAtOnce) {
    const auto ownedBefore = sonicOwned();
    nlohmann::json cfg;
    cfg["HOSTROUTED"]["global"] = {{"keepalive", "0.5"},  {"holdtime", "3"},
                                   {"proxy_arp", "true"}, {"proxy_nd", "true"},
                                   {"platform", "sonic"}, {"audit_interval", "0"}};
    cfg["HOSTROUTED_INTERFACE"]["Vlan1001"] = nlohmann::json::object();
    const std::string config = dir_ + "/config.json";
    std::ofstream(config) << cfg.dump(2);
    daemon_ = std::make_unique<lab::ChildProcess>(
        std::vector<std::string>{"ip", "netns", "exec", fabric_->ns("sw"), HOSTROUTED_BIN,
                                 "--config", config, "--no-frr-check", "--no-state-db"},
        dir_ + "/hostrouted.log", lab::ChildOptions{.notify = true});
    ASSERT_TRUE(daemon_->waitReady(20s)) << daemon_->log();

    hostSpeaks("h0");
    hostSpeaks("h8");
    ASSERT_TRUE(waitUntil(
        [this] {
            auto t = table10();
            return contains(t, "10.1.0.10 dev Vlan1001 proto 201") &&
                   contains(t, "10.1.0.18 dev Vlan1001 proto 201");
        },
        10s))
        << table10() << daemon_->log();

    // The member goes down; its host's neighbor entry and FDB entry say nothing yet.
    const auto down = std::chrono::steady_clock::now();
    fabric_->runOk("sw", {"ip", "link", "set", "Ethernet0", "down"});
    ASSERT_TRUE(waitUntil([this] { return !contains(table10(), "10.1.0.10 "); }, 5s, 2ms))
        << table10();
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - down);
    std::cout << "[ FIGURE ] member down -> host route withdrawn in " << took.count()
              << " ms (including the `ip link set` and polling every ~2 ms)\n";
    EXPECT_LT(took, 1000ms);  // well before holdtime (3 s): the link event did it
    EXPECT_TRUE(contains(table10(), "10.1.0.18 dev Vlan1001")) << table10();

    // The member and the host are back: so is the route.
    fabric_->runOk("sw", {"ip", "link", "set", "Ethernet0", "up"});
    EXPECT_TRUE(waitUntil(
        [this] {
            hostSpeaks("h0");
            return contains(table10(), "10.1.0.10 dev Vlan1001 proto 201");
        },
        10s))
        << table10() << daemon_->log();

    // platform sonic: what intfmgrd owns is untouched; proxy_delay is hostrouted's.
    EXPECT_EQ(sonicOwned(), ownedBefore);
    EXPECT_EQ(fabric_->run("sw", {"cat", "/proc/sys/net/ipv4/neigh/Vlan1001/proxy_delay"}).out,
              "0\n");
}

// The real edge's contract (tests/fakes FakeKernel promises the same): with bridgeFdb the
// first snapshot holds the bridge ports' VLAN lists and the bridge's FDB, before the
// neighbors, and later changes arrive as events; without it, neither dump is taken. (This
// kernel has no VLAN filtering, so its ports carry no list: the dump and its decoding are
// checked, the lists themselves with hand-built messages in netlink_parse_test.)
struct FdbRecorder : netlink::NetlinkObserver {
    std::vector<netlink::FdbEntry> dumped, events;
    std::vector<netlink::PortVlans> portsDumped;
    void onPortVlans(const netlink::PortVlans& p) override {
        if (inSnapshot) portsDumped.push_back(p);
    }
    bool inSnapshot = false;
    int snapshots = 0;
    void onLink(const netlink::LinkState&, bool) override {}
    void onAddress(const netlink::AddressEntry&, bool) override {}
    void onNeighbor(const netlink::NeighborEntry&, bool) override {}
    void onFdb(const netlink::FdbEntry& f, bool removed) override {
        // Only the test's own static entries: the bridge also learns the hosts' MACs from
        // whatever they send at link up (IPv6 router solicitations), at any moment.
        const bool ours =
            f.mac[0] == 2 && f.mac[1] == 0 && f.mac[2] == 0 && f.mac[3] == 0 && f.mac[4] == 0x0a;
        if (ours && f.isHostEntry() && !removed) (inSnapshot ? dumped : events).push_back(f);
    }
    void onSnapshotBegin() override { inSnapshot = true; }
    void onSnapshotEnd() override {
        inSnapshot = false;
        ++snapshots;
    }
    void onSnapshotAborted() override { inSnapshot = false; }
    void onBurstEnd() override {}
};

TEST_F(HostroutedSviIt, TheMonitorDumpsAndFollowsTheBridgeFdb) {
    fabric_->runOk("sw", {"bridge", "fdb", "add", "02:00:00:00:0a:01", "dev", "Ethernet8", "master",
                          "static"});
    FdbRecorder withFdb, without;
    std::string error;
    // setns() moves only the calling thread: the monitors live in a thread of their own.
    std::thread inSwitch([&] {
        int fd = ::open(("/var/run/netns/" + fabric_->ns("sw")).c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) {
            error = "cannot enter the switch's namespace";
            return;
        }
        ::close(fd);
        boost::asio::io_context io;
        netlink::MonitorOptions options;
        options.bridgeFdb = true;
        netlink::NetlinkMonitor monitor(io, withFdb, options);
        netlink::NetlinkMonitor plain(io, without);
        monitor.start();
        plain.start();
        // The second entry after both snapshots: added during a dump, it would be in it.
        for (int i = 0; i < 100 && (withFdb.snapshots == 0 || without.snapshots == 0); ++i)
            io.run_for(20ms);
        lab::runOk(
            {"bridge", "fdb", "add", "02:00:00:00:0a:02", "dev", "Ethernet0", "master", "static"});
        for (int i = 0; i < 100 && withFdb.events.empty(); ++i) io.run_for(20ms);
    });
    inSwitch.join();
    ASSERT_TRUE(error.empty()) << error;
    ASSERT_EQ(withFdb.snapshots, 1);
    ASSERT_EQ(withFdb.dumped.size(), 1U);
    EXPECT_EQ(withFdb.dumped[0].mac, (MacAddr{2, 0, 0, 0, 0x0a, 0x01}));
    EXPECT_NE(withFdb.dumped[0].master, 0);
    ASSERT_EQ(withFdb.events.size(), 1U);
    EXPECT_EQ(withFdb.events[0].mac, (MacAddr{2, 0, 0, 0, 0x0a, 0x02}));
    EXPECT_TRUE(without.dumped.empty());
    ASSERT_EQ(withFdb.portsDumped.size(), 2U);  // Ethernet0 and Ethernet8
    for (const auto& p : withFdb.portsDumped) {
        EXPECT_EQ(p.master, withFdb.dumped[0].master);
        std::cout << "[contract] bridge port " << p.ifindex << " VLAN list: "
                  << (p.vlans ? std::to_string(p.vlans->size()) + " VLANs" : "none") << "\n";
    }
    EXPECT_TRUE(without.portsDumped.empty());
}

}  // namespace
}  // namespace twinrail::it
