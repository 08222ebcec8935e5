// hostrouted's pure FRR-facing decisions: proxy ARP/ND ownership, and the zebra import
// audit on the JSON zebra really writes (shapes copied from FRR 8.4 output in the lab).
#include <gtest/gtest.h>

#include "frr_audit.h"
#include "proxy_settings.h"

namespace twinrail::hostrouted {
namespace {

IpAddr ip(const char* s) {
    return *IpAddr::parse(s);
}

TEST(ProxySettings, WritesOnlyWhatChangedAndUndoesOnlyItsOwn) {
    const ProxySetting arp{true, false}, nd{false, true}, off{};
    // Never touched and nothing wanted: the operator's setting stays.
    EXPECT_FALSE(proxyChange(std::nullopt, true, off));
    EXPECT_FALSE(proxyChange(std::nullopt, false, arp));
    // Turned on, then switched between ARP and ND while one stays on (the old bug).
    EXPECT_EQ(proxyChange(std::nullopt, true, arp), arp);
    EXPECT_FALSE(proxyChange(arp, true, arp));
    EXPECT_EQ(proxyChange(arp, true, nd), nd);
    EXPECT_EQ(proxyChange(arp, true, off), off);
    // A port no longer managed gets back the off state.
    EXPECT_EQ(proxyChange(nd, false, nd), off);
}

TEST(FrrAudit, ReadsTheTableCountsOfTheRouteSummary) {
    std::string err;
    auto c = parseImportCounts(R"({"routes":[{"fib":2,"rib":2,"type":"kernel"},
        {"fib":1,"rib":2,"fibOffLoaded":0,"type":"table"}],"routesTotal":4})",
                               err);
    ASSERT_TRUE(c) << err;
    EXPECT_EQ(c->rib, 2u);
    EXPECT_EQ(c->fib, 1u);
    auto none = parseImportCounts(R"({"routes":[{"fib":2,"rib":2,"type":"kernel"}]})", err);
    ASSERT_TRUE(none);
    EXPECT_EQ(none->rib, 0u);
    EXPECT_FALSE(parseImportCounts("% Unknown command", err));
    EXPECT_FALSE(parseImportCounts(R"({"routes":[{"type":"table","rib":"x"}]})", err));
}

// After kill -9 of zebra: the stale `proto zebra` copy is read back as a kernel route and
// wins; an import lost by frr#22654 is simply absent; another FRR route may win too.
TEST(FrrAudit, TellsShadowedFromMissingFromForeign) {
    std::string err;
    auto imports = parseZebraRoutes(R"({
      "10.128.0.2/32":[{"prefix":"10.128.0.2/32","protocol":"table","instance":10,"distance":15}],
      "10.128.0.3/32":[{"prefix":"10.128.0.3/32","protocol":"table","selected":true}],
      "10.128.0.9/32":[{"prefix":"10.128.0.9/32","protocol":"table","selected":true}],
      "10.128.0.5/32":[{"prefix":"10.128.0.5/32","protocol":"table"}],
      "10.128.0.0/24":[{"prefix":"10.128.0.0/24","protocol":"table","selected":true}]})",
                                    err);
    ASSERT_TRUE(imports) << err;
    auto kernel = parseZebraRoutes(R"({
      "10.128.0.2/32":[{"prefix":"10.128.0.2/32","protocol":"kernel","selected":true,
                        "distance":0,"metric":20}]})",
                                   err);
    ASSERT_TRUE(kernel) << err;
    imports->insert(imports->end(), kernel->begin(), kernel->end());
    auto a = auditImports({ip("10.128.0.2"), ip("10.128.0.3"), ip("10.128.0.4"), ip("10.128.0.5")},
                          {ip("10.128.0.7")}, *imports);
    EXPECT_EQ(a.shadowed, std::vector<IpAddr>{ip("10.128.0.2")});
    EXPECT_EQ(a.missing, std::vector<IpAddr>{ip("10.128.0.4")});
    EXPECT_EQ(a.outranked, std::vector<IpAddr>{ip("10.128.0.5")});
    EXPECT_EQ(a.foreign, std::vector<IpAddr>{ip("10.128.0.9")});
    EXPECT_FALSE(a.clean());
    // Too fresh to judge: .3 (imported) is not foreign and .4 (not yet) is not missing.
    auto fresh = auditImports({ip("10.128.0.2"), ip("10.128.0.5")},
                              {ip("10.128.0.3"), ip("10.128.0.4")}, *imports);
    EXPECT_TRUE(fresh.missing.empty());
    EXPECT_EQ(fresh.foreign, std::vector<IpAddr>{ip("10.128.0.9")});
    EXPECT_FALSE(parseZebraRoutes("[1,2]", err));
}

}  // namespace
}  // namespace twinrail::hostrouted
