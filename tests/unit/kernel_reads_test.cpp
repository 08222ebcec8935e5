// Issue 19: hostrouted reads the kernel without blocking its loop. The import audit's read
// of the main table and the uplink pinner's rule dump are asked for, then answered later
// on the io_context (the fakes post their answers as the real ones do); meanwhile the
// loop runs other handlers and the module waits in a defined state. A failed rule dump is
// logged and taken again, never thrown out of a callback.
#include <gtest/gtest.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>

#include "import_auditor.h"
#include "twinrail_fakes/frr.h"
#include "twinrail_fakes/kernel.h"
#include "uplink_pinner.h"

namespace twinrail::hostrouted {
namespace {

using namespace std::chrono_literals;

IpAddr ip(const char* s) {
    return *IpAddr::parse(s);
}

bool runUntil(boost::asio::io_context& io, const std::function<bool()>& done,
              std::chrono::milliseconds timeout) {
    auto until = std::chrono::steady_clock::now() + timeout;
    while (!done() && std::chrono::steady_clock::now() < until) io.run_one_for(10ms);
    return done();
}

// A timer firing every millisecond: proof that the loop runs while a read is under way.
struct Heartbeat {
    explicit Heartbeat(boost::asio::io_context& io) : timer(io) {}
    void start() {
        timer.expires_after(1ms);
        timer.async_wait([this](const boost::system::error_code& ec) {
            if (ec) return;
            ++beats;
            start();
        });
    }
    boost::asio::steady_timer timer;
    int beats = 0;
};

// zebra prefers a stale kernel copy (proto zebra, left by a killed zebra) of our 10.0.0.5
// over its table import: the audit must read the main table to take the copy over.
class ImportAuditRead : public ::testing::Test {
  protected:
    void SetUp() override {
        frr_.showAnswers["show ip route summary json"] =
            R"({"routes":[{"fib":0,"rib":1,"type":"table"}]})";
        frr_.showAnswers["show ip route table json"] =
            R"({"10.0.0.5/32":[{"protocol":"table","selected":false}]})";
        frr_.showAnswers["show ip route kernel json"] =
            R"({"10.0.0.5/32":[{"protocol":"kernel","selected":true}]})";
        table_.routes[ip("10.0.0.5")] = {ip("10.0.0.5"), 3, RT_TABLE_MAIN, RTPROT_ZEBRA};
        auto dumper = std::make_unique<fakes::FakeRouteDumper>(io_, table_);
        dumper_ = dumper.get();
        auditor_ = std::make_unique<ImportAuditor>(
            io_, frr_, table_, std::move(dumper),
            [] {
                return std::vector<OurRoute>{{{ip("10.0.0.5"), 3, 10, 201}, false}};
            },
            [this] { ++audits_; });
    }
    void TearDown() override {
        if (auditor_) auditor_->stop();
    }

    boost::asio::io_context io_;
    fakes::FakeFrr frr_{io_};
    fakes::FakeRouteTable table_;
    fakes::FakeRouteDumper* dumper_ = nullptr;
    std::unique_ptr<ImportAuditor> auditor_;
    int audits_ = 0;
};

TEST_F(ImportAuditRead, TheMainTableIsReadOnTheLoopAndTheRepairFollowsItsAnswer) {
    dumper_->hold = true;
    auditor_->start(std::chrono::seconds(1));
    ASSERT_TRUE(runUntil(
        io_, [this] { return dumper_->dumps == 1; }, 3s));
    // Asked for, not answered: the audit waits, and the loop goes on meanwhile.
    Heartbeat heartbeat(io_);
    heartbeat.start();
    EXPECT_TRUE(runUntil(
        io_, [&heartbeat] { return heartbeat.beats > 5; },
        5s));  // not a timing: a busy machine is slow
    EXPECT_EQ(audits_, 0);
    EXPECT_EQ(auditor_->stats().state, "unchecked");
    EXPECT_EQ(table_.writes, 0u);
    EXPECT_EQ(table_.routes.count(ip("10.0.0.5")), 1u);
    // The answer: the stale copy is taken over and removed.
    dumper_->release();
    ASSERT_TRUE(runUntil(
        io_, [this] { return audits_ == 1; }, 1s));
    EXPECT_EQ(auditor_->stats().state, "diverged");
    EXPECT_EQ(auditor_->stats().shadowed, 1u);
    EXPECT_EQ(auditor_->stats().repairs, 1u);
    EXPECT_EQ(table_.writes, 2u);  // replace with our protocol, then remove
    EXPECT_TRUE(table_.routes.empty());
}

TEST_F(ImportAuditRead, AFailedReadIsLoggedAndTheAuditEnds) {
    dumper_->failNext = 1;
    auditor_->start(std::chrono::seconds(1));
    ASSERT_TRUE(runUntil(
        io_, [this] { return audits_ == 1; }, 3s));
    EXPECT_EQ(dumper_->dumps, 1u);
    EXPECT_EQ(auditor_->stats().state, "diverged");
    EXPECT_EQ(auditor_->stats().repairs, 0u);
    EXPECT_EQ(table_.writes, 0u);  // nothing known, nothing touched
    // The next audit reads again and repairs.
    ASSERT_TRUE(runUntil(
        io_, [this] { return audits_ == 2; }, 3s));
    EXPECT_EQ(dumper_->dumps, 2u);
    EXPECT_EQ(auditor_->stats().repairs, 1u);
    EXPECT_TRUE(table_.routes.empty());
}

TEST_F(ImportAuditRead, AnAnswerAfterTheAuditorIsGoneIsDropped) {
    dumper_->hold = true;
    auditor_->start(std::chrono::seconds(1));
    ASSERT_TRUE(runUntil(
        io_, [this] { return dumper_->dumps == 1; }, 3s));
    // The dumper goes with the auditor; a fake's held answer is posted anyway.
    dumper_->release();
    auditor_.reset();
    io_.run_for(20ms);
    EXPECT_EQ(audits_, 0);
    EXPECT_EQ(table_.writes, 0u);
}

// d1 pinned to u1: u1 is up and the main table reaches 10.128.1.0/24 through it; the rule
// of a previous run is in the kernel already.
class PinnerRuleRead : public ::testing::Test {
  protected:
    void SetUp() override {
        PinSettings s;
        s.pins = {{"d1", "u1"}};
        writer_.rules.insert(existing_);
        pinner_ = std::make_unique<UplinkPinner>(
            io_, s, writer_, [this](std::set<uint32_t> tables, netlink::RouteFeed::OnChange f) {
                auto feed = std::make_unique<fakes::FakeRouteFeed>(std::move(tables), std::move(f));
                feed_ = feed.get();
                return feed;
            });
        pinner_->onLink({11, "u1", true, true, std::nullopt, 0, ""}, false);
        netlink::KernelRoute r;
        r.dst = *IpPrefix::parse("10.128.1.0/24");
        r.protocol = 186;
        r.metric = 20;
        r.nexthops = {{11, ip("169.254.0.1"), 1, true}};
        feed_->set(r);
    }
    size_t ruleAdds() const {
        return static_cast<size_t>(
            std::count_if(writer_.ops.begin(), writer_.ops.end(),
                          [](const auto& op) { return op.kind == netlink::PolicyOp::AddRule; }));
    }

    const netlink::PolicyRule existing_{AF_INET, 1000, "d1", 1000, 201};
    boost::asio::io_context io_;
    fakes::FakePolicyWriter writer_{io_};
    fakes::FakeRouteFeed* feed_ = nullptr;
    std::unique_ptr<UplinkPinner> pinner_;
};

TEST_F(PinnerRuleRead, RulesAreReadOnTheLoopAndNothingIsWrittenBefore) {
    writer_.hold = true;
    pinner_->start();  // the feed's first snapshot is done at once: the rule dump is asked
    EXPECT_EQ(writer_.ruleDumps, 1u);
    EXPECT_FALSE(pinner_->ready());
    Heartbeat heartbeat(io_);
    heartbeat.start();
    EXPECT_TRUE(runUntil(
        io_, [&heartbeat] { return heartbeat.beats > 5; },
        5s));  // not a timing: a busy machine is slow
    EXPECT_FALSE(pinner_->ready());
    EXPECT_TRUE(writer_.ops.empty()) << "wrote before the kernel's rules were known";
    writer_.hold = false;
    writer_.release();
    ASSERT_TRUE(runUntil(
        io_, [this] { return pinner_->ready(); }, 1s));
    EXPECT_EQ(writer_.ruleDumps, 2u);  // IPv4, then IPv6
    // The rule in place was adopted, not added again; the table was filled.
    EXPECT_EQ(ruleAdds(), 0u);
    EXPECT_EQ(writer_.rules.count(existing_), 1u);
    EXPECT_FALSE(writer_.routes.empty());
}

TEST_F(PinnerRuleRead, AFailedRuleDumpIsRetriedNotThrown) {
    writer_.failDumps = 1;
    EXPECT_NO_THROW(pinner_->start());
    io_.run_for(100ms);
    EXPECT_FALSE(pinner_->ready());
    EXPECT_EQ(pinner_->stats().ruleDumpErrors, 1u);
    EXPECT_TRUE(writer_.ops.empty());
    // Route changes meanwhile are kept by the feed, not written.
    netlink::KernelRoute r;
    r.dst = *IpPrefix::parse("10.128.2.0/24");
    r.protocol = 186;
    r.metric = 20;
    r.nexthops = {{11, ip("169.254.0.1"), 1, true}};
    feed_->set(r);
    EXPECT_TRUE(writer_.ops.empty());
    // A second later, read again: ready, both prefixes pinned, the rule adopted.
    ASSERT_TRUE(runUntil(
        io_, [this] { return pinner_->ready(); }, 3s));
    EXPECT_EQ(writer_.ruleDumps, 3u);
    EXPECT_EQ(ruleAdds(), 0u);
    EXPECT_EQ(writer_.routes.size(), 2u);
}

TEST_F(PinnerRuleRead, AnAnswerAfterStopIsIgnored) {
    writer_.hold = true;
    pinner_->start();
    pinner_->stop();
    writer_.hold = false;
    writer_.release();
    io_.run_for(50ms);
    EXPECT_FALSE(pinner_->ready());
    EXPECT_TRUE(writer_.ops.empty());
}

}  // namespace
}  // namespace twinrail::hostrouted
