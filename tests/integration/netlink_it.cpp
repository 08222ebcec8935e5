// libs/netlink against a real kernel, inside a namespace of the test's own: the monitor
// recovers from ENOBUFS by re-dumping, and the route programmer's batches and errors.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <fstream>
#include <map>

#include "twinrail/lab/fabric.h"
#include "twinrail/lab/process.h"
#include "twinrail/lab/shell.h"
#include "twinrail/netlink/monitor.h"
#include "twinrail/netlink/route_table.h"

using namespace twinrail;
using namespace std::chrono_literals;

namespace {

// Keeps what the monitor reports, the way a daemon would (mark and sweep on snapshots).
struct Recorder : netlink::NetlinkObserver {
    std::map<IpAddr, bool> neighbors;  // ip -> seen in current snapshot
    std::map<int, netlink::LinkState> links;
    int snapshots = 0;
    int aborted = 0;
    bool inSnapshot = false;
    void onLink(const netlink::LinkState& l, bool removed) override {
        if (removed)
            links.erase(l.ifindex);
        else
            links[l.ifindex] = l;
    }
    void onAddress(const netlink::AddressEntry&, bool) override {}
    void onNeighbor(const netlink::NeighborEntry& n, bool removed) override {
        if (removed)
            neighbors.erase(n.ip);
        else
            neighbors[n.ip] = true;
    }
    void onSnapshotBegin() override {
        inSnapshot = true;
        for (auto& [ip, seen] : neighbors) seen = false;
    }
    void onSnapshotEnd() override {
        ++snapshots;
        inSnapshot = false;
        std::erase_if(neighbors, [](const auto& kv) { return !kv.second; });
    }
    void onSnapshotAborted() override {
        ++aborted;
        inSnapshot = false;  // no sweep: what was not seen is not known to be gone
    }
    void onBurstEnd() override {}
    size_t ours() const {  // the test's own entries; the kernel adds the peer's link-local
        auto subnet = *IpPrefix::parse("10.50.0.0/16");
        return static_cast<size_t>(
            std::count_if(neighbors.begin(), neighbors.end(),
                          [&subnet](const auto& kv) { return subnet.contains(kv.first); }));
    }
};

class NetlinkIt : public ::testing::Test {
  protected:
    void SetUp() override {
        fabric_ = std::make_unique<lab::Fabric>(lab::uniquePrefix("tn"));
        fabric_->addNode("a");
        fabric_->addNode("b");
        fabric_->link("a", "p0", "b", "p0");
        fabric_->execOk("a", "ip addr add 10.50.0.1/16 dev p0");
        original_ = open("/proc/self/ns/net", O_RDONLY);
        int target = open(("/var/run/netns/" + fabric_->ns("a")).c_str(), O_RDONLY);
        ASSERT_EQ(setns(target, CLONE_NEWNET), 0);
        close(target);
    }
    void TearDown() override {
        setns(original_, CLONE_NEWNET);
        close(original_);
        fabric_.reset();
    }
    void addNeighbors(int count, int offset) {
        std::string path = "/tmp/" + fabric_->prefix() + "-neigh.batch";
        std::ofstream f(path);
        for (int i = offset; i < offset + count; ++i)
            f << "neigh replace 10.50." << (i / 250) << "." << (1 + i % 250)
              << " lladdr 02:00:00:00:00:01 dev p0 nud permanent\n";
        f.close();
        fabric_->execOk("a", "ip -batch " + path);
        std::remove(path.c_str());
    }
    std::unique_ptr<lab::Fabric> fabric_;
    int original_ = -1;
};

}  // namespace

TEST_F(NetlinkIt, MonitorRecoversFromOverflowByRedumping) {
    boost::asio::io_context io;
    Recorder rec;
    netlink::NetlinkMonitor monitor(io, rec, {4096, {}});  // tiny on purpose
    monitor.start();
    EXPECT_EQ(rec.snapshots, 1);
    EXPECT_EQ(rec.ours(), 0u);
    // 900 events while nobody reads (the kernel's default table limit is 1024 entries):
    // the socket overflows and events are lost.
    addNeighbors(900, 0);
    fabric_->execOk("a", "ip neigh del 10.50.0.1 dev p0");
    io.run_for(3s);
    EXPECT_GE(monitor.stats().overflows, 1u);
    EXPECT_GE(rec.snapshots, 2);
    // Converged to the kernel's state despite the lost events.
    EXPECT_EQ(rec.ours(), 899u);
    EXPECT_EQ(rec.neighbors.count(*IpAddr::parse("10.50.0.1")), 0u);
    EXPECT_EQ(rec.neighbors.count(*IpAddr::parse("10.50.3.150")), 1u);
}

TEST_F(NetlinkIt, MonitorFollowsEventsWithoutRedump) {
    boost::asio::io_context io;
    Recorder rec;
    netlink::NetlinkMonitor monitor(io, rec);
    monitor.start();
    addNeighbors(50, 0);
    fabric_->execOk("a", "ip link set p0 down");
    io.run_for(1s);
    EXPECT_EQ(monitor.stats().overflows, 0u);
    EXPECT_EQ(rec.snapshots, 1);
    bool sawDown = false;
    for (auto& [idx, l] : rec.links)
        if (l.name == "p0") sawDown = !l.operUp;
    EXPECT_TRUE(sawDown);
}

TEST_F(NetlinkIt, RouteTableBatchesAndReportsErrorsPerRoute) {
    netlink::KernelRouteTable table;
    int ifindex = std::stoi(fabric_->execOk("a", "cat /sys/class/net/p0/ifindex"));
    for (int i = 0; i < 5000; ++i) {
        uint8_t b[4] = {10, 60, static_cast<uint8_t>(i / 256), static_cast<uint8_t>(i % 256)};
        table.submit(netlink::RouteOp::Replace, {IpAddr::v4(b), ifindex, 10, 201});
    }
    uint8_t bad[4] = {10, 61, 0, 1};
    table.submit(netlink::RouteOp::Replace, {IpAddr::v4(bad), 99999, 10, 201});  // no such port
    auto results = table.flush();
    ASSERT_EQ(results.size(), 5001u);
    int failures = 0;
    for (const auto& r : results)
        if (r.error != 0) {
            ++failures;
            EXPECT_EQ(r.route.dst.str(), "10.61.0.1");
            EXPECT_EQ(r.error, ENODEV);
        }
    EXPECT_EQ(failures, 1);
    EXPECT_EQ(table.dump(AF_INET, 10, 201).size(), 5000u);
    EXPECT_EQ(table.dump(AF_INET, 10, 202).size(), 0u);  // other protocols are not ours
    // Replacing is idempotent, and removal of what is gone is reported, not fatal.
    uint8_t first[4] = {10, 60, 0, 0};
    table.submit(netlink::RouteOp::Replace, {IpAddr::v4(first), ifindex, 10, 201});
    table.submit(netlink::RouteOp::Remove, {IpAddr::v4(first), ifindex, 10, 201});
    table.submit(netlink::RouteOp::Remove, {IpAddr::v4(first), ifindex, 10, 201});
    results = table.flush();
    EXPECT_EQ(results[0].error, 0);
    EXPECT_EQ(results[1].error, 0);
    EXPECT_EQ(results[2].error, ESRCH);
    EXPECT_EQ(table.dump(AF_INET, 10, 201).size(), 4999u);
}

// The kernel flags a dump that raced a change (NLE_DUMP_INTR). It is read again at once;
// the snapshot completes and the daemon goes on.
TEST_F(NetlinkIt, InterruptedDumpIsReadAgainInPlace) {
    boost::asio::io_context io;
    Recorder rec;
    int neighborDumps = 0;
    netlink::MonitorOptions opts;
    opts.interruptDump = [&neighborDumps](int type) {
        return type == RTM_GETNEIGH && ++neighborDumps <= 2;  // the first two come back flagged
    };
    netlink::NetlinkMonitor monitor(io, rec, opts);
    addNeighbors(20, 0);
    monitor.start();
    EXPECT_EQ(monitor.stats().dumpsInterrupted, 2u);
    EXPECT_EQ(monitor.stats().snapshotsAborted, 0u);
    EXPECT_EQ(rec.snapshots, 1);
    EXPECT_EQ(rec.aborted, 0);
    EXPECT_EQ(rec.ours(), 20u);
}

// A snapshot whose dumps keep failing must not sweep (that would withdraw live hosts);
// it is aborted and taken again a second later.
TEST_F(NetlinkIt, SnapshotThatKeepsFailingIsAbortedWithoutSweepAndRetried) {
    boost::asio::io_context io;
    Recorder rec;
    bool failing = false;
    netlink::MonitorOptions opts;
    opts.interruptDump = [&failing](int type) { return failing && type == RTM_GETADDR; };
    netlink::NetlinkMonitor monitor(io, rec, opts);
    addNeighbors(20, 0);
    monitor.start();
    ASSERT_EQ(rec.ours(), 20u);
    failing = true;
    EXPECT_FALSE(monitor.snapshot("test"));
    EXPECT_EQ(rec.aborted, 1);
    EXPECT_EQ(rec.snapshots, 1);  // no second end: nothing swept
    EXPECT_EQ(rec.ours(), 20u);   // every host still there
    EXPECT_GE(monitor.stats().dumpsInterrupted, 5u);
    failing = false;
    io.run_for(1500ms);  // the retry, a second later
    EXPECT_EQ(rec.snapshots, 2);
    EXPECT_EQ(rec.ours(), 20u);
}

// The real thing: addresses change while multi-part address dumps run. Whatever the
// kernel flags is read again; the monitor never stops and ends at the kernel's state.
TEST_F(NetlinkIt, DumpsRacingAddressChurnAreRetriedNotFatal) {
    std::string path = "/tmp/" + fabric_->prefix() + "-addr.batch";
    {
        std::ofstream f(path);
        for (int i = 0; i < 3000; ++i)
            f << "addr add 10.60." << (i / 250) << "." << (1 + i % 250) << "/32 dev lo\n";
    }
    fabric_->execOk("a", "ip -batch " + path);
    std::remove(path.c_str());
    boost::asio::io_context io;
    Recorder rec;
    netlink::NetlinkMonitor monitor(io, rec);
    monitor.start();
    addNeighbors(20, 0);
    lab::ChildProcess churn({"ip", "netns", "exec", fabric_->ns("a"), "bash", "-c",
                             "while :; do ip addr add 10.61.0.1/32 dev lo; "
                             "ip addr del 10.61.0.1/32 dev lo; done"},
                            "/dev/null");
    int completed = 0;
    auto until = std::chrono::steady_clock::now() + 4s;
    while (std::chrono::steady_clock::now() < until) {
        if (monitor.snapshot("churn")) ++completed;
        io.poll();
    }
    churn.stop();
    io.run_for(1500ms);  // a pending retry, if the last one aborted
    std::cout << "snapshots completed " << completed << ", dumps interrupted "
              << monitor.stats().dumpsInterrupted << ", aborted "
              << monitor.stats().snapshotsAborted << "\n";
    EXPECT_GT(completed, 0);
    EXPECT_GT(monitor.stats().dumpsInterrupted, 0u) << "the churn never raced a dump";
    EXPECT_EQ(rec.ours(), 20u);
}
