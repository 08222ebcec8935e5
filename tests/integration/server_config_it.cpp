// The servers' network config the planner writes (bond attachment), checked by the
// tools that consume it on a real server: `netplan generate` renders the netplan file
// into systemd-networkd units (in a scratch root), and `systemd-analyze verify` checks the
// dual-send ARP unit as instantiated for each bond. No namespaces, no root needed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/shell.h"
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
