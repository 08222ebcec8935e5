// The fixture of the libs/netlink namespace tests (netlink_it.cpp, netlink_loop_it.cpp): a
// namespace of the test's own, an observer that records what the monitor delivers, and a
// ticker that counts the loop's turns.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <fstream>
#include <functional>
#include <map>
#include <thread>
#include <vector>

#include "twinrail/lab/fabric.h"
#include "twinrail/lab/process.h"
#include "twinrail/lab/shell.h"
#include "twinrail/netlink/monitor.h"
#include "twinrail/netlink/policy_writer.h"
#include "twinrail/netlink/route_table.h"
#include "twinrail/netlink/route_watch.h"

using namespace twinrail;
using namespace std::chrono_literals;

// Named, not anonymous: both files' tests must share one NetlinkIt fixture class.
namespace netlink_fixture {

// Keeps what the monitor reports, the way a daemon would (mark and sweep on snapshots).
struct Recorder : netlink::NetlinkObserver {
    std::map<IpAddr, bool> neighbors;  // ip -> seen in current snapshot
    std::map<int, netlink::LinkState> links;
    int begins = 0;
    int snapshots = 0;
    int aborted = 0;
    bool inSnapshot = false;
    // In order: 'B' begin, 'E' end, 'A' aborted, 'n' neighbor, 'd' neighbor removed.
    std::vector<std::pair<char, IpAddr>> calls;
    void onLink(const netlink::LinkState& l, bool removed) override {
        if (removed) {
            links.erase(l.ifindex);
        } else {
            links[l.ifindex] = l;
        }
    }
    void onAddress(const netlink::AddressEntry&, bool) override {}
    void onNeighbor(const netlink::NeighborEntry& n, bool removed) override {
        calls.emplace_back(removed ? 'd' : 'n', n.ip);
        if (removed) {
            neighbors.erase(n.ip);
        } else {
            neighbors[n.ip] = true;
        }
    }
    void onSnapshotBegin() override {
        ++begins;
        calls.emplace_back('B', IpAddr{});
        inSnapshot = true;
        for (auto& [ip, seen] : neighbors) seen = false;
    }
    void onSnapshotEnd() override {
        ++snapshots;
        calls.emplace_back('E', IpAddr{});
        inSnapshot = false;
        std::erase_if(neighbors, [](const auto& kv) { return !kv.second; });
    }
    void onSnapshotAborted() override {
        ++aborted;
        calls.emplace_back('A', IpAddr{});
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

// Runs the loop until `done` or `timeout`; whether it got there.
inline bool runUntil(boost::asio::io_context& io, const std::function<bool()>& done,
                     std::chrono::milliseconds timeout) {
    auto until = std::chrono::steady_clock::now() + timeout;
    while (!done() && std::chrono::steady_clock::now() < until) io.run_one_for(10ms);
    return done();
}

// A handler that posts itself again while `running`: its count is the number of loop
// turns other handlers got, its longest gap the longest the loop was held by one.
struct Ticker {
    boost::asio::io_context& io;
    std::function<bool()> running;
    int ticks = 0;
    std::chrono::steady_clock::duration longestGap{};
    std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
    void start() {
        last = std::chrono::steady_clock::now();
        boost::asio::post(io, [this] { tick(); });
    }
    void tick() {
        auto now = std::chrono::steady_clock::now();
        longestGap = std::max(longestGap, now - last);
        last = now;
        ++ticks;
        if (running()) boost::asio::post(io, [this] { tick(); });
    }
};

class NetlinkIt : public ::testing::Test {
  protected:
    void SetUp() override {
        fabric_ = std::make_unique<lab::Fabric>(lab::uniquePrefix("tn"));
        fabric_->addNode("a");
        fabric_->addNode("b");
        fabric_->link("a", "p0", "b", "p0");
        fabric_->runOk("a", {"ip", "addr", "add", "10.50.0.1/16", "dev", "p0"});
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
        for (int i = offset; i < offset + count; ++i) {
            f << "neigh replace 10.50." << (i / 250) << "." << (1 + i % 250)
              << " lladdr 02:00:00:00:00:01 dev p0 nud permanent\n";
        }
        f.close();
        fabric_->runOk("a", {"ip", "-batch", path});
        std::remove(path.c_str());
    }
    std::unique_ptr<lab::Fabric> fabric_;
    int original_ = -1;
};

}  // namespace netlink_fixture

using namespace netlink_fixture;  // NOLINT(google-build-using-namespace): test fixture
