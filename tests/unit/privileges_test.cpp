// Least privilege (issue 18 item 9): sysctl writes limited to the daemon's allow-list, and
// children of the daemons (vtysh, tc) started without capabilities they do not need.
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "twinrail/common/names.h"
#include "twinrail/common/subprocess.h"
#include "twinrail/common/sysctl.h"

using namespace twinrail;
using sysctl::Section;

namespace {

constexpr auto kTimeout = std::chrono::seconds(10);
constexpr uint64_t kNetAdmin = uint64_t{1} << CAP_NET_ADMIN;
constexpr uint64_t kNetRaw = uint64_t{1} << CAP_NET_RAW;

// "CapEff:\t0000003fffffffff" from /proc/<pid>/status; ~0 when absent.
uint64_t capField(const std::string& status, const std::string& field) {
    std::istringstream in(status);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(field + ":", 0) == 0)
            return std::stoull(line.substr(field.size() + 1), nullptr, 16);
    }
    return ~uint64_t{0};
}

std::string childStatus(const ProcessOptions& options = {}) {
    return runProcessSync({"/bin/cat", "/proc/self/status"}, kTimeout, options).out;
}

// A scratch /proc/sys with one interface's three files.
struct FakeProcSys {
    std::filesystem::path root;
    FakeProcSys() {
        char tmpl[] = "/tmp/twinrail-sysctl-XXXXXX";
        root = ::mkdtemp(tmpl);
        for (const char* file :
             {"net/ipv4/conf/Ethernet0.10/proxy_arp", "net/ipv6/conf/Ethernet0.10/proxy_ndp",
              "net/ipv4/neigh/Ethernet0.10/proxy_delay"}) {
            std::filesystem::create_directories((root / file).parent_path());
            std::ofstream(root / file) << "80\n";
        }
    }
    ~FakeProcSys() { std::filesystem::remove_all(root); }
    std::string text(const std::string& file) const {
        std::ifstream f(root / file);
        return std::string(std::istreambuf_iterator<char>(f), {});
    }
};

}  // namespace

TEST(SysctlPath, DottedInterfaceNameStaysOneElement) {
    EXPECT_EQ(sysctl::path(Section::Ipv4Conf, "Ethernet0.10", "proxy_arp"),
              "/proc/sys/net/ipv4/conf/Ethernet0.10/proxy_arp");
    EXPECT_EQ(sysctl::path(Section::Ipv6Conf, "swp1", "proxy_ndp"),
              "/proc/sys/net/ipv6/conf/swp1/proxy_ndp");
    EXPECT_EQ(sysctl::path(Section::Ipv4Neigh, "bond0.200", "proxy_delay", "/tmp/x"),
              "/tmp/x/net/ipv4/neigh/bond0.200/proxy_delay");
    EXPECT_EQ(sysctl::displayName(Section::Ipv4Conf, "swp1\n", "proxy_arp"),
              "net.ipv4.conf.swp1\\x0a.proxy_arp");
}

TEST(SysctlAllowList, HostroutedSettingsAllowed) {
    const sysctl::Writer w(sysctl::kHostroutedSettings);
    for (const char* ifname : {"swp1", "Ethernet0", "Ethernet0.10", "bond0-x_1"}) {
        EXPECT_FALSE(w.refusal(Section::Ipv4Conf, ifname, "proxy_arp")) << ifname;
        EXPECT_FALSE(w.refusal(Section::Ipv6Conf, ifname, "proxy_ndp")) << ifname;
        EXPECT_FALSE(w.refusal(Section::Ipv4Neigh, ifname, "proxy_delay")) << ifname;
    }
}

TEST(SysctlAllowList, OtherSettingsRefused) {
    const sysctl::Writer w(sysctl::kHostroutedSettings);
    // net.ipv4.conf.all.forwarding, net.ipv4.ip_forward (no interface part to name it by),
    // the "every interface" entries, keys of the wrong section, keys not owned.
    EXPECT_TRUE(w.refusal(Section::Ipv4Conf, "all", "forwarding"));
    EXPECT_TRUE(w.refusal(Section::Ipv4Conf, "all", "proxy_arp"));
    EXPECT_TRUE(w.refusal(Section::Ipv4Conf, "default", "proxy_arp"));
    EXPECT_TRUE(w.refusal(Section::Ipv6Conf, "all", "proxy_ndp"));
    EXPECT_TRUE(w.refusal(Section::Ipv4Conf, "..", "ip_forward"));
    EXPECT_TRUE(w.refusal(Section::Ipv4Conf, "swp1", "forwarding"));
    EXPECT_TRUE(w.refusal(Section::Ipv4Conf, "swp1", "arp_accept"));
    EXPECT_TRUE(w.refusal(Section::Ipv6Conf, "swp1", "proxy_arp"));
    EXPECT_TRUE(w.refusal(Section::Ipv6Neigh, "swp1", "proxy_delay"));
    EXPECT_TRUE(w.refusal(Section::Ipv4Conf, "swp1", "proxy_arp/../forwarding"));
    EXPECT_TRUE(w.refusal(Section::Ipv4Conf, "swp1", ""));
    // A Writer allows only its own list.
    const sysctl::Setting arpOnly[] = {{Section::Ipv4Conf, "arp_accept"}};
    EXPECT_FALSE(sysctl::Writer(arpOnly).refusal(Section::Ipv4Conf, "swp1", "arp_accept"));
    EXPECT_TRUE(sysctl::Writer(arpOnly).refusal(Section::Ipv4Conf, "swp1", "proxy_arp"));
}

TEST(SysctlAllowList, BadInterfaceNamesRefused) {
    const sysctl::Writer w(sysctl::kHostroutedSettings);
    for (const char* ifname : {"", "..", ".", "swp1/../all", "a/b", "../../../kernel", "swp1\n",
                               "swp\n1", " swp1", "swp1 ", "Ethernet0123456789", "-swp1"}) {
        EXPECT_TRUE(w.refusal(Section::Ipv4Conf, ifname, "proxy_arp")) << names::printable(ifname);
    }
}

TEST(SysctlWriter, WritesOnlyAllowedFiles) {
    FakeProcSys sys;
    const sysctl::Writer w(sysctl::kHostroutedSettings, sys.root.string());
    EXPECT_EQ(w.write(Section::Ipv4Conf, "Ethernet0.10", "proxy_arp", "1"), "");
    EXPECT_EQ(sys.text("net/ipv4/conf/Ethernet0.10/proxy_arp"), "1");
    EXPECT_EQ(w.write(Section::Ipv4Neigh, "Ethernet0.10", "proxy_delay", "0"), "");
    EXPECT_EQ(w.read(Section::Ipv4Neigh, "Ethernet0.10", "proxy_delay"), "0");
    EXPECT_EQ(w.read(Section::Ipv6Conf, "Ethernet0.10", "proxy_ndp"), "80");

    // Refused: nothing is written, and the message says which setting (printably).
    std::string err = w.write(Section::Ipv4Conf, "Ethernet0.10\n", "proxy_arp", "0");
    EXPECT_NE(err.find("refused"), std::string::npos) << err;
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
    EXPECT_NE(w.write(Section::Ipv4Conf, "Ethernet0.10", "forwarding", "1").find("refused"),
              std::string::npos);
    EXPECT_NE(w.write(Section::Ipv4Conf, "Ethernet0.10", "proxy_arp", "1\n0").find("refused"),
              std::string::npos);
    EXPECT_NE(w.write(Section::Ipv4Conf, "Ethernet0.10", "proxy_arp", "").find("refused"),
              std::string::npos);
    EXPECT_FALSE(w.read(Section::Ipv4Conf, "all", "proxy_arp"));
    EXPECT_EQ(sys.text("net/ipv4/conf/Ethernet0.10/proxy_arp"), "1");

    // A port that went away: an error, and no file appears for it.
    err = w.write(Section::Ipv4Conf, "swp9", "proxy_arp", "1");
    EXPECT_NE(err.find("net.ipv4.conf.swp9.proxy_arp"), std::string::npos) << err;
    EXPECT_FALSE(std::filesystem::exists(sys.root / "net/ipv4/conf/swp9"));
}

// The parent's own ambient/inheritable sets as the test runs (root: usually empty) do not
// reach the child; a uid-0 child still gets root's capabilities back from exec (the
// kernel's rule for root), so CapEff is only checked when the test is not root. The
// daemons' own case (unprivileged user with ambient capabilities) is the next test.
TEST(ChildCapabilities, DefaultChildHasNoAmbientOrInheritable) {
    std::string status = childStatus();
    ASSERT_NE(capField(status, "CapAmb"), ~uint64_t{0}) << status;
    EXPECT_EQ(capField(status, "CapAmb"), 0u);
    EXPECT_EQ(capField(status, "CapInh"), 0u);
    if (::geteuid() != 0) {
        EXPECT_EQ(capField(status, "CapEff"), 0u);
        EXPECT_EQ(capField(status, "CapPrm"), 0u);
    }
}

// As under the units: a process of an unprivileged user holding CAP_NET_ADMIN and
// CAP_NET_RAW as ambient (and so inheritable) capabilities, which is what systemd's
// AmbientCapabilities= makes of the daemons. Needs root to set up; skipped otherwise.
TEST(ChildCapabilities, DaemonChildrenGetOnlyWhatTheyAskFor) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to become an unprivileged daemon";
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::close(fds[0]);
        std::string out;
        __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
        __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};
        d[0].effective = d[0].permitted = d[0].inheritable = kNetAdmin | kNetRaw;
        bool ok = ::prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) == 0 && ::setgroups(0, nullptr) == 0 &&
                  ::setresgid(65534, 65534, 65534) == 0 && ::setresuid(65534, 65534, 65534) == 0 &&
                  ::syscall(SYS_capset, &h, d) == 0 &&
                  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_ADMIN, 0, 0) == 0 &&
                  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_RAW, 0, 0) == 0;
        if (!ok) {
            out = "SKIP cannot become an unprivileged daemon: " + std::string(std::strerror(errno));
        } else {
            out =
                childStatus() + "\n--keep--\n" +
                childStatus(ProcessOptions{{Capability::NetAdmin}}) + "\n--parent--\n" +
                std::string(
                    std::istreambuf_iterator<char>(std::ifstream("/proc/self/status").rdbuf()), {});
        }
        for (size_t at = 0; at < out.size();) {
            ssize_t n = ::write(fds[1], out.data() + at, out.size() - at);
            if (n <= 0) break;
            at += static_cast<size_t>(n);
        }
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, n);
    ::close(fds[0]);
    ::waitpid(pid, nullptr, 0);
    if (text.rfind("SKIP", 0) == 0) GTEST_SKIP() << text;
    size_t keepAt = text.find("\n--keep--\n");
    size_t parentAt = text.find("\n--parent--\n");
    ASSERT_NE(keepAt, std::string::npos) << text;
    ASSERT_NE(parentAt, std::string::npos) << text;
    std::string none = text.substr(0, keepAt);
    std::string keep = text.substr(keepAt, parentAt - keepAt);
    std::string parent = text.substr(parentAt);
    // The set-up worked: the "daemon" had both, as ambient capabilities.
    ASSERT_EQ(capField(parent, "CapAmb"), kNetAdmin | kNetRaw) << parent;

    // Default: vtysh's case, nothing at all.
    for (const char* f : {"CapAmb", "CapInh", "CapEff", "CapPrm"})
        EXPECT_EQ(capField(none, f), 0u) << f;
    // tc's case: CAP_NET_ADMIN only, not the daemon's CAP_NET_RAW.
    for (const char* f : {"CapAmb", "CapInh", "CapEff", "CapPrm"})
        EXPECT_EQ(capField(keep, f), kNetAdmin) << f;
}

TEST(ChildCapabilities, StartFailuresAreReported) {
    auto r = runProcessSync({"/nonexistent/program"}, kTimeout);
    EXPECT_EQ(r.exitCode, -1);
    EXPECT_NE(r.err.find("cannot start /nonexistent/program"), std::string::npos) << r.err;
    // No '/': searched in PATH, as before.
    EXPECT_EQ(runProcessSync({"true"}, kTimeout).exitCode, 0);
    EXPECT_EQ(runProcessSync({"twinrail-no-such-program"}, kTimeout).exitCode, -1);
    EXPECT_EQ(runProcessSync({}, kTimeout).exitCode, -1);
}
