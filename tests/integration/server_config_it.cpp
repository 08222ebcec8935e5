// The servers' network config the planner writes (bond attachment), checked by the
// tools that consume it on a real server: `netplan generate` renders the netplan file
// into systemd-networkd units (in a scratch root), and `systemd-analyze verify` checks the
// dual-send ARP unit as instantiated for each bond. No namespaces, no root needed; but
// the Linux switch's RoCE QoS lines, which iproute2 parses in a namespace of their own.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/shell.h"
#include "twinrail/plan/roce.h"
#include "twinrail/plan/server_config.h"

namespace fs = std::filesystem;
namespace plan = twinrail::plan;
namespace lab = twinrail::lab;

namespace {

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

class ServerConfig : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = "/tmp/trl-srvcfg-" + std::to_string(getpid());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        plan_ = std::get<plan::Plan>(plan::buildPlan(lab::defaultLabRequest()));
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path dir_;
    plan::Plan plan_;
};

TEST_F(ServerConfig, NetplanRendersOneBalanceXorBondPerNic) {
    const auto& srv = plan_.servers[0];
    fs::path root = dir_ / "root";
    fs::create_directories(root / "etc/netplan");
    std::ofstream(root / "etc/netplan/60-twinrail.yaml") << plan::netplanConfig(plan_, srv);
    fs::permissions(root / "etc/netplan/60-twinrail.yaml",
                    fs::perms::owner_read | fs::perms::owner_write);
    auto r = lab::run({"netplan", "generate", "--root-dir", root.string()});
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    for (const auto& nic : srv.nics) {
        std::string netdev =
            slurp(root / "run/systemd/network" / ("10-netplan-" + plan::bondName(nic) + ".netdev"));
        EXPECT_NE(netdev.find("Kind=bond"), std::string::npos) << netdev;
        EXPECT_NE(netdev.find("Mode=balance-xor"), std::string::npos) << netdev;
        EXPECT_NE(netdev.find("TransmitHashPolicy=layer3+4"), std::string::npos) << netdev;
        EXPECT_NE(netdev.find("MIIMonitorSec=100ms"), std::string::npos) << netdev;
        std::string network = slurp(root / "run/systemd/network" /
                                    ("10-netplan-" + plan::bondName(nic) + ".network"));
        EXPECT_NE(network.find("Address=" + nic.address + "/24"), std::string::npos) << network;
        EXPECT_NE(network.find("From=" + nic.address), std::string::npos) << network;
        for (const auto& port : nic.ports) {
            std::string slave =
                slurp(root / "run/systemd/network" /
                      ("10-netplan-" + plan::serverPortName(nic, port) + ".network"));
            EXPECT_NE(slave.find("Bond=" + plan::bondName(nic)), std::string::npos) << slave;
        }
    }
}

TEST_F(ServerConfig, DualSendUnitVerifiesForEveryBond) {
    for (const auto& nic : plan_.servers[0].nics) {
        fs::path unit = dir_ / ("twinrail-dual-send@" + plan::bondName(nic) + ".service");
        std::ofstream(unit) << plan::dualSendUnit();
        auto r = lab::run({"systemd-analyze", "verify", "--man=no", unit.string()});
        const std::string output = r.out + r.err;  // its warnings are on stderr
        EXPECT_EQ(r.rc, 0) << output;
        EXPECT_EQ(output.find(unit.filename().string() + ":"), std::string::npos) << output;
    }
}

}  // namespace

// evpn-mh: the same bond as 802.3ad with fast LACP, the partner of the leaf pair's ES.
TEST(ServerConfigEvpnMh, NetplanRendersOneLacpBondPerNic) {
    auto p = std::get<plan::Plan>(plan::buildPlan(lab::defaultLabRequest(plan::Attach::EvpnMh)));
    fs::path root = "/tmp/trl-srvcfg-mh-" + std::to_string(getpid());
    fs::remove_all(root);
    fs::create_directories(root / "etc/netplan");
    std::ofstream(root / "etc/netplan/60-twinrail.yaml") << plan::netplanConfig(p, p.servers[0]);
    fs::permissions(root / "etc/netplan/60-twinrail.yaml",
                    fs::perms::owner_read | fs::perms::owner_write);
    auto r = lab::run({"netplan", "generate", "--root-dir", root.string()});
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    for (const auto& nic : p.servers[0].nics) {
        std::string netdev =
            slurp(root / "run/systemd/network" / ("10-netplan-" + plan::bondName(nic) + ".netdev"));
        EXPECT_NE(netdev.find("Mode=802.3ad"), std::string::npos) << netdev;
        EXPECT_NE(netdev.find("LACPTransmitRate=fast"), std::string::npos) << netdev;
        EXPECT_NE(netdev.find("TransmitHashPolicy=layer3+4"), std::string::npos) << netdev;
    }
    fs::remove_all(root);
}

// A Linux switch's RoCE QoS unit: every tc line as iproute2 parses it, on a veth in a
// namespace of its own. This kernel has no ets or red qdisc, so the kernel refuses them
// ("Error: ..." from netlink, tc exits 2); what must never happen is tc refusing the line
// itself (exit 1: a word or a value it cannot parse), which a switch would do too.
TEST(SwitchConfig, RoceQosTcLinesParseWithIproute2) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (a network namespace)";
    auto built = plan::buildPlan(lab::defaultLabRequest());
    ASSERT_TRUE(std::holds_alternative<plan::Plan>(built));
    const auto& p = std::get<plan::Plan>(built);
    const auto& sw = *p.findSwitch("p1-spine1");
    std::vector<plan::RocePort> ports;
    for (const auto& port : sw.ports)
        ports.push_back({port.name, port.role != plan::PortRole::Host});
    const std::string ns = "trqos" + std::to_string(::getpid());
    lab::runOk({"ip", "netns", "add", ns});
    std::istringstream unit(plan::roceLinuxSwitchUnit(p.request.roce, sw.name, ports));
    int lines = 0;
    for (std::string line; std::getline(unit, line);) {
        if (line.rfind("ExecStart=/usr/sbin/tc ", 0) != 0) continue;
        std::istringstream w(line.substr(10));
        lab::Argv argv{"ip", "netns", "exec", ns};
        for (std::string t; w >> t;) argv.push_back(t);
        const std::string dev = argv[argv.size() > 8 ? 8 : 0];
        lab::run({"ip", "-n", ns, "link", "add", "name", dev, "type", "veth", "peer", "name",
                  "p" + std::to_string(lines)});
        auto r = lab::run(argv);
        ++lines;
        EXPECT_TRUE(r.rc == 0 || (r.rc == 2 && r.err.find("Error: ") != std::string::npos))
            << line << "\nrc " << r.rc << ": " << r.err;
    }
    lab::run({"ip", "netns", "del", ns});
    EXPECT_EQ(lines, 2 * static_cast<int>(ports.size()));
}
