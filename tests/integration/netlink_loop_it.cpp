// libs/netlink's reads that run while the loop does (the monitor's snapshots, the route
// dumper) against a real kernel: they answer on the io_context, never inside the call, and
// other handlers run while they are read (a ticker posted on the loop counts its turns).
#include "netlink_fixture.h"

TEST_F(NetlinkIt, SnapshotIsReadOnTheLoopWhileOtherHandlersRun) {
    addNeighbors(20000, 0);
    boost::asio::io_context io;
    Recorder rec;
    netlink::NetlinkMonitor monitor(io, rec);
    monitor.start();
    ASSERT_EQ(rec.ours(), 20000u);
    auto t0 = std::chrono::steady_clock::now();
    monitor.requestSnapshot("test");
    auto inCall = std::chrono::steady_clock::now() - t0;
    EXPECT_TRUE(monitor.snapshotRunning());
    EXPECT_EQ(rec.begins, 1) << "delivered inside requestSnapshot";
    Ticker ticker{io, [&monitor] { return monitor.snapshotRunning(); }};
    ticker.start();
    ASSERT_TRUE(runUntil(
        io, [&rec] { return rec.snapshots == 2; }, 10s));
    auto total = std::chrono::steady_clock::now() - t0;
    auto us = [](auto d) {
        return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
    };
    std::cout << "snapshot of " << rec.ours() << " neighbors: " << us(total) << " us, "
              << us(inCall) << " us inside requestSnapshot, " << ticker.ticks
              << " loop turns for other handlers, longest hold " << us(ticker.longestGap)
              << " us\n";
    // A turn at least per dump (four), more for the neighbors' many parts: about 1.5 MB,
    // read at most 16 datagrams of up to 32 KiB at a time (6 turns measured on 6.18).
    EXPECT_GE(ticker.ticks, 5);
    EXPECT_EQ(rec.begins, 2);
    EXPECT_EQ(rec.aborted, 0);
    EXPECT_EQ(rec.ours(), 20000u);
}

// Events read while a snapshot's dumps are under way are held back and delivered after its
// end, in their order: nothing but dumped entries between onSnapshotBegin and End, and no
// event lost.
TEST_F(NetlinkIt, EventsDuringASnapshotAreReplayedAfterIt) {
    addNeighbors(20, 0);
    boost::asio::io_context io;
    Recorder rec;
    netlink::NetlinkMonitor monitor(io, rec);
    monitor.start();
    ASSERT_EQ(rec.ours(), 20u);
    monitor.requestSnapshot("test");
    // Its dumps are not read yet: one host comes and one goes meanwhile.
    auto added = *IpAddr::parse("10.50.9.9"), gone = *IpAddr::parse("10.50.0.1");
    fabric_->runOk("a", {"ip", "neigh", "replace", "10.50.9.9", "lladdr", "02:00:00:00:00:02",
                         "dev", "p0", "nud", "permanent"});
    fabric_->runOk("a", {"ip", "neigh", "del", "10.50.0.1", "dev", "p0"});
    ASSERT_TRUE(runUntil(
        io, [&rec] { return rec.snapshots == 2; }, 5s));
    io.run_for(200ms);
    EXPECT_GE(monitor.stats().queuedDuringSnapshot, 2u);
    auto begin = std::find(rec.calls.rbegin(), rec.calls.rend(), std::pair{'B', IpAddr{}});
    auto end = std::find(rec.calls.rbegin(), rec.calls.rend(), std::pair{'E', IpAddr{}});
    ASSERT_NE(end, rec.calls.rend());
    ASSERT_LT(end, begin);
    // Between them: the dumps' entries only (the added host, not the removal).
    std::vector<std::pair<char, IpAddr>> inside(begin.base(), end.base() - 1);
    EXPECT_EQ(std::count(inside.begin(), inside.end(), std::pair{'d', gone}), 0);
    EXPECT_EQ(std::count(inside.begin(), inside.end(), std::pair{'n', gone}), 0);
    // After: the events, in their order.
    std::vector<std::pair<char, IpAddr>> after(end.base(), rec.calls.end());
    auto add = std::find(after.begin(), after.end(), std::pair{'n', added});
    auto del = std::find(after.begin(), after.end(), std::pair{'d', gone});
    ASSERT_NE(add, after.end());
    ASSERT_NE(del, after.end());
    EXPECT_LT(add, del);
    EXPECT_EQ(rec.neighbors.count(added), 1u);
    EXPECT_EQ(rec.neighbors.count(gone), 0u);
    EXPECT_EQ(rec.ours(), 20u);
}

// Requests made while a snapshot runs are one more snapshot after it, not one each.
TEST_F(NetlinkIt, RequestsDuringASnapshotAreOneMoreAfterIt) {
    addNeighbors(20, 0);
    boost::asio::io_context io;
    Recorder rec;
    netlink::NetlinkMonitor monitor(io, rec);
    monitor.start();
    monitor.requestSnapshot("a");
    monitor.requestSnapshot("b");
    monitor.requestSnapshot("c");
    ASSERT_TRUE(runUntil(
        io, [&rec] { return rec.snapshots == 3; }, 5s));
    io.run_for(300ms);
    EXPECT_EQ(rec.snapshots, 3);
    EXPECT_EQ(monitor.stats().snapshots, 3u);
    EXPECT_FALSE(monitor.snapshotRunning());
    EXPECT_EQ(rec.ours(), 20u);
}

// The import audit's read of the main table: answered on the loop, never inside dump();
// other handlers run while a large table is read; dumps asked for together answer in order.
TEST_F(NetlinkIt, RouteDumperAnswersOnTheLoopWhileOtherHandlersRun) {
    netlink::KernelRouteTable table;
    int ifindex = std::stoi(fabric_->runOk("a", {"cat", "/sys/class/net/p0/ifindex"}));
    for (int i = 0; i < 20000; ++i) {
        uint8_t b[4] = {10, 70, static_cast<uint8_t>(i / 256), static_cast<uint8_t>(i % 256)};
        table.submit(netlink::RouteOp::Replace, {IpAddr::v4(b), ifindex, 10, 201});
    }
    for (const auto& r : table.flush()) ASSERT_EQ(r.error, 0) << strerror(r.error);
    auto expected = table.dump(AF_INET, 10, 201);
    boost::asio::io_context io;
    netlink::KernelRouteDumper dumper(io);
    std::vector<std::pair<int, std::vector<netlink::HostRoute>>> answers;
    auto record = [&answers](int error, std::vector<netlink::HostRoute> routes) {
        answers.emplace_back(error, std::move(routes));
    };
    dumper.dump(AF_INET, 10, 201, record);
    dumper.dump(AF_INET, 10, 202, record);  // after the first one
    EXPECT_TRUE(answers.empty()) << "answered inside dump()";
    Ticker ticker{io, [&answers] { return answers.empty(); }};
    ticker.start();
    ASSERT_TRUE(runUntil(
        io, [&answers] { return answers.size() == 2; }, 10s));
    std::cout << "route dump: " << ticker.ticks << " loop turns for other handlers\n";
    EXPECT_GE(ticker.ticks, 2);
    EXPECT_EQ(answers[0].first, 0) << strerror(answers[0].first);
    auto got = answers[0].second;
    std::sort(got.begin(), got.end());
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(got.size(), 20000u);
    EXPECT_EQ(got, expected);
    EXPECT_EQ(answers[1].first, 0);
    EXPECT_TRUE(answers[1].second.empty());  // another protocol's: none
}
