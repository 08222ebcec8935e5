// RoCE QoS (roce.h): one set of choices in the plan, the switches' CONFIG_DB rows, each
// server's DCB unit and nccl.conf derived from it, and the agreement check that reads the
// three back. What matters most: a one-field change anywhere is a disagreement.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "plan_sonic_helpers.h"
#include "twinrail/plan/roce.h"
#include "twinrail/plan/server_config.h"
#include "twinrail/plan/sonic_target.h"

namespace plan = twinrail::plan;
namespace fs = std::filesystem;
using nlohmann::json;
using twinrail::plansonic_test::build;
using twinrail::plansonic_test::catalogSku;

namespace {

json overlayOf(const plan::Plan& p, const std::string& name) {
    const plan::SonicRelease release = p.request.attach == plan::Attach::EvpnMh
                                           ? plan::SonicRelease::Master
                                           : plan::SonicRelease::R202505;
    auto c = plan::sonicSwitchConfig(p, *p.findSwitch(name), catalogSku("CX864E-N"), {release});
    if (auto* why = std::get_if<std::string>(&c)) {
        ADD_FAILURE() << *why;
        return {};
    }
    return std::get<plan::SonicSwitchConfig>(c).overlay;
}

std::vector<std::string> serverPorts(const plan::Server& srv) {
    std::vector<std::string> out;
    for (const auto& nic : srv.nics)
        for (const auto& port : nic.ports) out.push_back(plan::serverPortName(nic, port));
    return out;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
}

std::string joined(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines) out += l + "\n";
    return out;
}

}  // namespace

TEST(RoceQos, ChoicesThatCannotWorkAreRefused) {
    EXPECT_FALSE(plan::roceQosProblem({}).has_value());
    EXPECT_EQ(plan::roceTrafficClass({}), 106);  // DSCP 26, ECT(0): what NCCL_IB_TC wants
    auto with = [](auto change) {
        plan::RoceQos q;
        change(q);
        return plan::roceQosProblem(q).value_or("");
    };
    EXPECT_NE(with([](auto& q) { q.priority = 0; }), "");
    EXPECT_NE(with([](auto& q) { q.priority = 8; }), "");
    EXPECT_NE(with([](auto& q) { q.dscp = 64; }), "");
    EXPECT_NE(with([](auto& q) { q.cnpPriority = q.priority; }), "");
    EXPECT_NE(with([](auto& q) { q.cnpDscp = q.dscp; }), "");
    EXPECT_NE(with([](auto& q) { q.hostCableM = 0; }), "");
    // A plan is not built from them.
    auto r = twinrail::plansonic_test::request("CX864E-N", 512);
    r.roce.cnpDscp = r.roce.dscp;
    auto built = plan::buildPlan(r);
    ASSERT_TRUE(std::holds_alternative<plan::SizingError>(built));
    EXPECT_NE(std::get<plan::SizingError>(built).message.find("RoCE QoS: CNPs need their own DSCP"),
              std::string::npos);
}

// Every switch of a plan in every attach mode, and a server: the three artefacts agree.
TEST(RoceQos, SwitchesServersAndNcclAgree) {
    for (auto attach : {plan::Attach::Bond, plan::Attach::Routed, plan::Attach::EvpnMh}) {
        auto p = build("CX864E-N", 512, attach);
        for (const auto& sw : p.switches) {
            if (sw.index > 1) continue;  // one leaf and one spine per plane
            EXPECT_EQ(joined(plan::roceAgreement(p.request.roce, overlayOf(p, sw.name), "", "")),
                      "")
                << plan::attachName(attach) << " " << sw.name;
        }
        const auto& srv = p.servers.front();
        EXPECT_EQ(
            joined(plan::roceAgreement(
                p.request.roce, {}, plan::roceDcbUnit(p.request.roce, srv.name, serverPorts(srv)),
                plan::ncclConfig(p.request.roce))),
            "");
    }
}

// A plan built with any one choice changed makes artefacts the original choices refuse:
// the check sees each field, on the switch, in the DCB unit and in NCCL's config.
TEST(RoceQos, OneFieldChangedAnywhereIsADisagreement) {
    const plan::RoceQos q;
    const std::vector<std::pair<std::string, void (*)(plan::RoceQos&)>> changes{
        {"priority", [](plan::RoceQos& c) { c.priority = 4; }},
        {"dscp", [](plan::RoceQos& c) { c.dscp = 24; }},
        {"cnp priority", [](plan::RoceQos& c) { c.cnpPriority = 7; }},
        {"cnp dscp", [](plan::RoceQos& c) { c.cnpDscp = 46; }},
        {"host cable", [](plan::RoceQos& c) { c.hostCableM = 5; }},
        {"fabric cable", [](plan::RoceQos& c) { c.fabricCableM = 5; }}};
    for (const auto& [what, change] : changes) {
        auto r = twinrail::plansonic_test::request("CX864E-N", 512);
        change(r.roce);
        auto p = build(r);
        EXPECT_FALSE(plan::roceAgreement(q, overlayOf(p, "p1-leaf1"), "", "").empty()) << what;
        if (what.find("cable") != std::string::npos) continue;  // not a server's concern
        const auto& srv = p.servers.front();
        const bool dcb =
            !plan::roceAgreement(q, {}, plan::roceDcbUnit(r.roce, srv.name, serverPorts(srv)), "")
                 .empty();
        EXPECT_TRUE(dcb) << what;
        if (what == "dscp") {
            EXPECT_FALSE(plan::roceAgreement(q, {}, "", plan::ncclConfig(r.roce)).empty());
        }
    }
    // Hand edits to one row or line.
    auto p = build("CX864E-N", 512);
    const json good = overlayOf(p, "p1-leaf1");
    auto edited = [&](auto edit) {
        json db = good;
        edit(db);
        return joined(plan::roceAgreement(q, db, "", ""));
    };
    EXPECT_NE(edited([](json& db) {
                  db["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] = "3,4";
              }).find("PORT_QOS_MAP|Ethernet0 pfc_enable: \"3,4\", the plan says \"3\""),
              std::string::npos);
    EXPECT_NE(edited([](json& db) {
                  db["PORT_QOS_MAP"].erase("Ethernet256");
              }).find("PORT_QOS_MAP|Ethernet256 pfc_enable: (none)"),
              std::string::npos);
    EXPECT_NE(edited([](json& db) { db["DSCP_TO_TC_MAP"]["TWINRAIL_ROCE"]["26"] = "0"; }), "");
    EXPECT_NE(edited([](json& db) {
                  db["WRED_PROFILE"]["TWINRAIL_LOSSLESS"]["ecn"] = "ecn_none";
              }).find("no ECN marking"),
              std::string::npos);
    EXPECT_NE(edited([](json& db) {
                  db["QUEUE"]["Ethernet0|6"]["scheduler"] = "scheduler.0";
              }).find("QUEUE|Ethernet0|6 scheduler type: \"DWRR\""),
              std::string::npos);
    EXPECT_NE(edited([](json& db) { db["CABLE_LENGTH"]["AZURE"].erase("Ethernet0"); }), "");
    const auto& srv = p.servers.front();
    const std::string unit = plan::roceDcbUnit(q, srv.name, serverPorts(srv));
    EXPECT_NE(joined(plan::roceAgreement(q, {}, replaced(unit, "3:on 4:off", "3:on 4:on"), "")),
              "");
    EXPECT_NE(joined(plan::roceAgreement(q, {}, replaced(unit, " 26:3 ", " 26:0 "), "")), "");
    EXPECT_NE(
        joined(plan::roceAgreement(q, {}, replaced(unit, "dscp-prio 26:3", "dscp-prio x:y"), "")),
        "");
    EXPECT_NE(joined(plan::roceAgreement(
                  q, {}, "", replaced(plan::ncclConfig(q), "NCCL_IB_TC=106", "NCCL_IB_TC=104"))),
              "");
}

// What systemd would say of a unit: its output (empty when it has nothing to say) and
// whether it passed.
static std::pair<bool, std::string> systemdAnalyzeVerify(const std::string& name,
                                                         const std::string& text) {
    const fs::path dir = fs::temp_directory_path() / ("roce-unit-" + std::to_string(getpid()));
    fs::create_directories(dir);
    const fs::path unit = dir / name;
    std::ofstream(unit) << text;
    const std::string cmd =
        "systemd-analyze verify " + unit.string() + " > " + (dir / "out").string() + " 2>&1";
    const int rc = std::system(cmd.c_str());
    std::ifstream out(dir / "out");
    std::string said((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
    fs::remove_all(dir);
    return {rc == 0, said};
}

TEST(RoceQos, DcbUnitPassesSystemdAnalyzeVerify) {
    if (std::system("command -v systemd-analyze > /dev/null 2>&1") != 0)
        GTEST_SKIP() << "no systemd-analyze";
    auto p = build("CX864E-N", 512);
    const auto& srv = p.servers.front();
    auto [ok, said] = systemdAnalyzeVerify(
        "twinrail-roce-dcb.service", plan::roceDcbUnit(p.request.roce, srv.name, serverPorts(srv)));
    EXPECT_TRUE(ok) << said;
    EXPECT_EQ(said, "");
}

TEST(RoceQos, PlanFileKeepsTheChoicesAndRefusesBadOnes) {
    auto r = twinrail::plansonic_test::request("CX864E-N", 512);
    r.roce.dscp = 24;
    r.roce.hostCableM = 5;
    auto p = build(r);
    auto j = plan::toJson(p);
    EXPECT_EQ(j["request"]["roce"]["dscp"], 24);
    auto back = plan::planFromJson(j);
    ASSERT_TRUE(std::holds_alternative<plan::Plan>(back));
    EXPECT_EQ(std::get<plan::Plan>(back).request.roce, r.roce);
    j["request"]["roce"]["cnp_dscp"] = 24;
    auto bad = plan::planFromJson(j);
    ASSERT_TRUE(std::holds_alternative<plan::SizingError>(bad));
    EXPECT_NE(
        std::get<plan::SizingError>(bad).message.find("request.roce: CNPs need their own DSCP"),
        std::string::npos)
        << std::get<plan::SizingError>(bad).message;
    j["request"].erase("roce");  // a plan from before: the defaults
    auto old = plan::planFromJson(j);
    ASSERT_TRUE(std::holds_alternative<plan::Plan>(old));
    EXPECT_EQ(std::get<plan::Plan>(old).request.roce, plan::RoceQos{});
}

namespace {

std::vector<plan::RocePort> switchPorts(const plan::Switch& sw) {
    std::vector<plan::RocePort> out;
    for (const auto& p : sw.ports) out.push_back({p.name, p.role != plan::PortRole::Host});
    return out;
}

}  // namespace

// Linux switches: DCB as a NIC's, ETS bands and RED with ECN on the RoCE band; read back,
// every choice changed alone and every hand edit of a line is a disagreement.
TEST(RoceQos, LinuxSwitchUnitAgreesAndEveryChangeIsNamed) {
    const plan::RoceQos q;
    auto p = build("CX864E-N", 512);
    const auto& sw = *p.findSwitch("p1-leaf1");
    const std::string unit = plan::roceLinuxSwitchUnit(q, sw.name, switchPorts(sw));
    EXPECT_EQ(joined(plan::roceLinuxSwitchAgreement(q, unit)), "");
    EXPECT_NE(unit.find("ets bands 3 strict 1 quanta 8500 1500 priomap 2 2 2 1 2 2 0 2"),
              std::string::npos)
        << unit;
    EXPECT_NE(unit.find("red limit 4194304 min 1048576 max 2097152 avpkt 1500 burst 932 "
                        "probability 0.05 ecn"),
              std::string::npos)
        << unit;
    const std::vector<std::pair<std::string, void (*)(plan::RoceQos&)>> changes{
        {"priority", [](plan::RoceQos& c) { c.priority = 4; }},
        {"dscp", [](plan::RoceQos& c) { c.dscp = 24; }},
        {"cnp priority", [](plan::RoceQos& c) { c.cnpPriority = 7; }},
        {"cnp dscp", [](plan::RoceQos& c) { c.cnpDscp = 46; }}};
    for (const auto& [what, change] : changes) {
        plan::RoceQos other = q;
        change(other);
        auto changed = plan::roceLinuxSwitchUnit(other, sw.name, switchPorts(sw));
        EXPECT_NE(joined(plan::roceLinuxSwitchAgreement(q, changed)), "") << what;
    }
    const std::string port = sw.ports.front().name;
    auto edit = [&unit](const std::string& from, const std::string& to) {
        return joined(plan::roceLinuxSwitchAgreement(plan::RoceQos{}, replaced(unit, from, to)));
    };
    EXPECT_NE(edit(" probability 0.05 ecn", " probability 0.05").find("no ECN marking"),
              std::string::npos);
    EXPECT_NE(edit("strict 1 quanta", "strict 0 quanta").find("not on a strict band"),
              std::string::npos);
    EXPECT_NE(edit("priomap 2 2 2 1 2", "priomap 2 2 1 1 2").find("shares its band"),
              std::string::npos);
    EXPECT_NE(edit("min 1048576 max 2097152", "min 3000000 max 4000000").find("ECN marks from"),
              std::string::npos);
    EXPECT_NE(edit("parent 1:2 handle 11: red", "parent 1:3 handle 11: red").find("no ECN marking"),
              std::string::npos);
    EXPECT_NE(edit("3:on 4:off", "3:off 4:off"), "");
    EXPECT_NE(joined(plan::roceLinuxSwitchAgreement(q, "")), "");  // nothing: named, not passed
}

TEST(RoceQos, LinuxSwitchUnitPassesSystemdAnalyzeVerify) {
    if (std::system("command -v systemd-analyze > /dev/null 2>&1") != 0)
        GTEST_SKIP() << "no systemd-analyze";
    auto p = build("CX864E-N", 512);
    const auto& sw = *p.findSwitch("p1-spine1");
    auto [ok, said] =
        systemdAnalyzeVerify("twinrail-roce-qos.service",
                             plan::roceLinuxSwitchUnit(p.request.roce, sw.name, switchPorts(sw)));
    EXPECT_TRUE(ok) << said;
    EXPECT_EQ(said, "");
}
