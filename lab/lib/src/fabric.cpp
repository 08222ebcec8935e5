#include "twinrail/lab/fabric.h"

#include "twinrail/lab/frr_container.h"

#include "twinrail/lab/ecn_marker.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <sched.h>
#include <signal.h>
#include <unistd.h>

namespace twinrail::lab {
namespace {
constexpr const char* kFrrBin = "/usr/lib/frr";

// The CPUs this process may run on, as the hex mask rps_cpus takes ("3" for CPUs 0-1).
std::string cpuMask() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return "1";
    std::string hex;
    for (int base = 0; base < CPU_SETSIZE; base += 4) {
        int nibble = 0;
        for (int bit = 0; bit < 4; ++bit)
            if (CPU_ISSET(base + bit, &set)) nibble |= 1 << bit;
        hex.insert(hex.begin(), "0123456789abcdef"[nibble]);
    }
    hex.erase(0, std::min(hex.find_first_not_of('0'), hex.size() - 1));
    // rps_cpus takes 32-bit groups separated by commas, as /proc/irq/*/smp_affinity.
    for (auto at = static_cast<std::ptrdiff_t>(hex.size()) - 8; at > 0; at -= 8)
        hex.insert(static_cast<size_t>(at), ",");
    return hex;
}

// A veth receives on the CPU that sent into it, so the packets of one flow are forwarded
// by whichever CPU sent each of them, in parallel: a flow that changes ports (flowlets,
// spraying) or leaves a queue on a timer's CPU arrives out of order at the next hop,
// which no switch ASIC does and a NIC's RSS does not either (it keeps a flow on one CPU).
// RPS over every CPU does what RSS does: each flow to one CPU by its flow hash, the
// same on every device, so its packets are forwarded in the order they were sent. Measured
// with lb_bench: flowlet ARS on the permutation, 0.9-3% of the UDP probe late without it,
// none with it. Done before the ends move to their namespaces (the setting moves with the
// device), and per device: Debian 12's kernel (6.1) has no net.core.rps_default_mask.
void steerEachFlowToOneCpu(const std::string& device, const std::string& mask) {
    std::error_code ec;
    const std::filesystem::path queues = "/sys/class/net/" + device + "/queues";
    for (const auto& q : std::filesystem::directory_iterator(queues, ec)) {
        if (q.path().filename().string().rfind("rx-", 0) != 0) continue;
        std::ofstream rps(q.path() / "rps_cpus");
        if (!rps) continue;  // a kernel without RPS: the lab runs, reordering as it will
        rps << mask << "\n";
        rps.flush();
        if (!rps) throw std::runtime_error("rps_cpus of " + device + ": write refused");
    }
}
}  // namespace

Fabric::Fabric(std::string prefix) : prefix_(std::move(prefix)) {}

Fabric::~Fabric() {
    teardown();
}

void Fabric::addNode(const std::string& node) {
    const std::string n = ns(node);
    lab::run({"ip", "netns", "del", n});  // left over from a crashed run
    lab::runOk({"ip", "netns", "add", n});
    nodes_.push_back(node);
    // txrehash=0: a Linux TCP sender otherwise picks a new flow hash after every
    // retransmission timeout, and veth carries that hash to the next namespace, where
    // multipath routing uses it instead of the headers. Flows would then leave a lossy
    // path by themselves; a switch ASIC hashes the headers, so the lab should too.
    runOk(node, {"ip", "link", "set", "lo", "up"});
    runOk(node, {"sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1",
                 "net.ipv6.conf.all.disable_ipv6=0", "net.ipv6.conf.default.disable_ipv6=0",
                 "net.ipv4.fib_multipath_hash_policy=1", "net.ipv6.fib_multipath_hash_policy=1",
                 "net.core.txrehash=0"});
}

void Fabric::link(const std::string& a, const std::string& ifA, const std::string& b,
                  const std::string& ifB) {
    // Temporary names in the root namespace, at most 15 characters, unique per process.
    const std::string tmp = "t" + std::to_string(getpid()) + "-" + std::to_string(vethCounter_++);
    const std::string tmpA = tmp + "a";
    const std::string tmpB = tmp + "b";
    lab::runOk({"ip", "link", "add", tmpA, "type", "veth", "peer", "name", tmpB});
    const std::string mask = cpuMask();
    steerEachFlowToOneCpu(tmpA, mask);
    steerEachFlowToOneCpu(tmpB, mask);
    lab::runOk({"ip", "link", "set", tmpA, "netns", ns(a)});
    lab::runOk({"ip", "link", "set", tmpB, "netns", ns(b)});
    runOk(a, {"ip", "link", "set", tmpA, "name", ifA});
    runOk(a, {"ip", "link", "set", ifA, "up"});
    runOk(b, {"ip", "link", "set", tmpB, "name", ifB});
    runOk(b, {"ip", "link", "set", ifB, "up"});
}

ShellResult Fabric::run(const std::string& node, const Argv& argv) const {
    return lab::run(inNamespace(ns(node), argv));
}

std::string Fabric::runOk(const std::string& node, const Argv& argv) const {
    return lab::runOk(inNamespace(ns(node), argv));
}

std::string Fabric::runAllOk(const std::string& node, const std::vector<Argv>& commands) const {
    std::string out;
    for (const auto& argv : commands) out += runOk(node, argv);
    return out;
}

std::string Fabric::frrDir(const std::string& node) const {
    return "/var/run/frr/" + ns(node);
}

void Fabric::startFrr(const std::string& node, const std::string& config) {
    const std::string n = ns(node);
    const std::string run = frrDir(node);
    const std::string etc = "/etc/frr/" + n;
    std::filesystem::create_directories(run);
    std::filesystem::create_directories(etc);
    lab::runOk({"chown", "frr:frr", run, etc});
    {
        std::ofstream(etc + "/vtysh.conf") << "service integrated-vtysh-config\n";
        std::ofstream(run + "/frr.conf") << config;
    }
    frrNodes_.push_back(node);
    startFrrDaemons(n, {"zebra", "bgpd", "staticd"});
}

void startFrrDaemons(const std::string& n, const std::vector<std::string>& daemons) {
    const std::string run = "/var/run/frr/" + n;
    for (const std::string& daemon : daemons) {
        std::string sock = run + "/" + daemon + ".vty";
        std::error_code ec;
        std::filesystem::remove(sock, ec);
        Argv argv{std::string(kFrrBin) + "/" + daemon,
                  "-d",
                  "-N",
                  n,
                  "-F",
                  "datacenter",
                  "-f",
                  "/dev/null",
                  "-i",
                  run + "/" + daemon + ".pid",
                  "--log",
                  "file:" + run + "/" + daemon + ".log",
                  "-A",
                  "127.0.0.1"};
        if (daemon == "zebra") argv.insert(argv.end(), {"-s", "90000000"});
        runOk(inNamespace(n, argv));
        // Each daemon is ready when its vty socket exists; zebra must be before bgpd.
        if (!waitUntil([sock] { return std::filesystem::exists(sock); }, std::chrono::seconds(10)))
            throw std::runtime_error("FRR " + daemon + " in " + n + " did not start");
    }
    runOk({"vtysh", "-N", n, "-f", run + "/frr.conf"});
}

void stopFrrDaemons(const std::vector<std::string>& namespaces,
                    const std::vector<std::string>& daemons, int signal) {
    // Every daemon of every instance gets the signal at once: each FRR daemon takes 1.5-2 s
    // to finish on SIGTERM, so stopping them one by one costs seconds per daemon.
    std::vector<pid_t> pids;
    for (const auto& n : namespaces) {
        for (const auto& daemon : daemons) {
            std::ifstream in("/var/run/frr/" + n + "/" + daemon + ".pid");
            pid_t pid = 0;
            if (in >> pid && pid > 0 && ::kill(pid, signal) == 0) pids.push_back(pid);
        }
    }
    auto gone = [&pids] {
        return std::all_of(pids.begin(), pids.end(), [](pid_t p) { return ::kill(p, 0) != 0; });
    };
    if (!waitUntil(gone, std::chrono::seconds(5), std::chrono::milliseconds(20))) {
        for (pid_t p : pids) ::kill(p, SIGKILL);
        waitUntil(gone, std::chrono::seconds(5), std::chrono::milliseconds(20));
    }
}

void Fabric::startFrrInContainer(const std::string& node, const std::string& config,
                                 bool bgpdVtyPort) {
    frrNodes_.push_back(node);
    startFrrContainer(ns(node), config, bgpdVtyPort);
}

std::string Fabric::vtysh(const std::string& node, const std::string& command) const {
    Argv argv = vtyshFor(ns(node));
    argv.insert(argv.end(), {"-c", command});
    return lab::run(argv).out;
}

void Fabric::stopFrr(const std::vector<std::string>& nodes) {
    std::vector<std::string> namespaces;
    std::vector<std::string> containers;
    for (const auto& node : nodes)
        (frrInContainer(ns(node)) ? containers : namespaces).push_back(ns(node));
    stopFrrDaemons(namespaces, {"staticd", "bgpd", "zebra"}, SIGTERM);
    removeFrrContainers(containers);
    for (const auto& node : nodes) {
        std::error_code ec;
        std::filesystem::remove_all(frrDir(node), ec);
        std::filesystem::remove_all("/etc/frr/" + ns(node), ec);
    }
}

void Fabric::teardown() {
    stopFrr(frrNodes_);
    frrNodes_.clear();
    for (const auto& node : nodes_) {
        // Anything still running in the namespace (a daemon under test) goes with it.
        std::istringstream pids(lab::run({"ip", "netns", "pids", ns(node)}).out);
        for (pid_t pid; pids >> pid;)
            if (pid > 0) ::kill(pid, SIGKILL);
        lab::run({"ip", "netns", "del", ns(node)});
    }
    nodes_.clear();
}

void Fabric::detach() {
    nodes_.clear();
    frrNodes_.clear();
}

std::string leafOrSpineFrrConfig(const std::string& hostname, int asn, const std::string& routerId,
                                 const std::vector<std::string>& fabricPorts) {
    std::string c = "frr defaults datacenter\nhostname " + hostname + "\n!\n";
    c += "router bgp " + std::to_string(asn) + "\n";
    c += " bgp router-id " + routerId + "\n";
    c += " no bgp ebgp-requires-policy\n bgp bestpath as-path multipath-relax\n";
    c += " neighbor FABRIC peer-group\n neighbor FABRIC remote-as external\n";
    c += " neighbor FABRIC advertisement-interval 0\n neighbor FABRIC timers 3 9\n";
    for (const auto& p : fabricPorts) c += " neighbor " + p + " interface peer-group FABRIC\n";
    c += " address-family ipv4 unicast\n  redistribute connected\n  maximum-paths 64\n";
    c += " exit-address-family\n";
    c += " address-family ipv6 unicast\n  neighbor FABRIC activate\n  redistribute connected\n";
    c += "  maximum-paths 64\n exit-address-family\n!\n";
    return c;
}

void buildMiniFabric(Fabric& f) {
    for (const char* node : {"s1", "l1", "l2", "h1", "h2", "h3"}) f.addNode(node);
    f.link("l1", "swp1", "s1", "swp1");
    f.link("l2", "swp1", "s1", "swp2");
    f.link("h1", "eth0", "l1", "swp3");
    f.link("h2", "eth0", "l2", "swp3");
    f.link("h3", "eth0", "l1", "swp4");
    f.runOk("s1", {"ip", "addr", "add", "10.0.0.1/32", "dev", "lo"});
    f.runAllOk("l1", {{"ip", "addr", "add", "10.0.0.11/32", "dev", "lo"},
                      {"ip", "addr", "add", "10.1.1.1/24", "dev", "swp3"},
                      {"ip", "addr", "add", "2001:db8:1::1/64", "dev", "swp3", "nodad"},
                      {"ip", "addr", "add", "10.8.0.1/16", "dev", "swp4"}});
    f.runAllOk("l2", {{"ip", "addr", "add", "10.0.0.12/32", "dev", "lo"},
                      {"ip", "addr", "add", "10.2.2.1/24", "dev", "swp3"},
                      {"ip", "addr", "add", "2001:db8:2::1/64", "dev", "swp3", "nodad"}});
    f.runAllOk("h1", {{"ip", "addr", "add", "10.1.1.10/24", "dev", "eth0"},
                      {"ip", "addr", "add", "2001:db8:1::10/64", "dev", "eth0", "nodad"},
                      {"ip", "route", "add", "default", "via", "10.1.1.1"},
                      {"ip", "-6", "route", "add", "default", "via", "2001:db8:1::1"}});
    f.runAllOk("h2", {{"ip", "addr", "add", "10.2.2.10/24", "dev", "eth0"},
                      {"ip", "addr", "add", "2001:db8:2::10/64", "dev", "eth0", "nodad"},
                      {"ip", "route", "add", "default", "via", "10.2.2.1"},
                      {"ip", "-6", "route", "add", "default", "via", "2001:db8:2::1"}});
    f.runAllOk("h3", {{"ip", "addr", "add", "10.8.0.10/16", "dev", "eth0"},
                      {"ip", "route", "add", "default", "via", "10.8.0.1"}});
    f.startFrr("s1", leafOrSpineFrrConfig("s1", 65001, "10.0.0.1", {"swp1", "swp2"}));
    f.startFrr("l1", leafOrSpineFrrConfig("l1", 65101, "10.0.0.11", {"swp1"}));
    f.startFrr("l2", leafOrSpineFrrConfig("l2", 65102, "10.0.0.12", {"swp1"}));
    // Converged when l2 has learned l1's loopback through the spine.
    if (!waitUntil(
            [&f] {
                return f.run("l2", {"ip", "route", "show", "10.0.0.11"}).out.find("10.0.0.11") !=
                       std::string::npos;
            },
            std::chrono::seconds(60)))
        throw std::runtime_error("BGP did not converge in the mini fabric");
}

void buildDualSpineFabric(Fabric& f) {
    for (const char* node : {"s1", "s2", "l1", "l2", "h1", "h2"}) f.addNode(node);
    f.link("l1", "swp1", "s1", "swp1");
    f.link("l1", "swp2", "s2", "swp1");
    f.link("l2", "swp1", "s1", "swp2");
    f.link("l2", "swp2", "s2", "swp2");
    f.link("h1", "eth0", "l1", "swp3");
    f.link("h2", "eth0", "l2", "swp3");
    f.runOk("s1", {"ip", "addr", "add", "10.0.0.1/32", "dev", "lo"});
    f.runOk("s2", {"ip", "addr", "add", "10.0.0.2/32", "dev", "lo"});
    f.runAllOk("l1", {{"ip", "addr", "add", "10.0.0.11/32", "dev", "lo"},
                      {"ip", "addr", "add", "10.1.1.1/24", "dev", "swp3"}});
    f.runAllOk("l2", {{"ip", "addr", "add", "10.0.0.12/32", "dev", "lo"},
                      {"ip", "addr", "add", "10.2.2.1/24", "dev", "swp3"}});
    f.runAllOk("h1", {{"ip", "addr", "add", "10.1.1.10/24", "dev", "eth0"},
                      {"ip", "route", "add", "default", "via", "10.1.1.1"}});
    f.runAllOk("h2", {{"ip", "addr", "add", "10.2.2.10/24", "dev", "eth0"},
                      {"ip", "route", "add", "default", "via", "10.2.2.1"}});
    f.startFrr("s1", leafOrSpineFrrConfig("s1", 65000, "10.0.0.1", {"swp1", "swp2"}));
    f.startFrr("s2", leafOrSpineFrrConfig("s2", 65000, "10.0.0.2", {"swp1", "swp2"}));
    f.startFrr("l1", leafOrSpineFrrConfig("l1", 65101, "10.0.0.11", {"swp1", "swp2"}));
    f.startFrr("l2", leafOrSpineFrrConfig("l2", 65102, "10.0.0.12", {"swp1", "swp2"}));
    auto twoPaths = [&f](const std::string& node, const std::string& prefix) {
        auto out = f.run(node, {"ip", "route", "show", prefix}).out;
        return out.find("dev swp1") != std::string::npos &&
               out.find("dev swp2") != std::string::npos;
    };
    if (!waitUntil(
            [&twoPaths] { return twoPaths("l1", "10.2.2.0/24") && twoPaths("l2", "10.1.1.0/24"); },
            std::chrono::seconds(60)))
        throw std::runtime_error("BGP did not converge in the dual-spine fabric");
}

std::map<std::string, int> parseRouteWeights(const std::string& text) {
    std::map<std::string, int> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        auto dev = line.find(" dev ");
        if (dev == std::string::npos) continue;
        std::istringstream words(line.substr(dev + 5));
        std::string name, key;
        int weight = 1;
        words >> name;
        while (words >> key) {
            if (key == "weight") words >> weight;
        }
        out[name] = weight;
    }
    return out;
}

void shapePort(Fabric& f, const std::string& node, const std::string& port, double mbit) {
    if (mbit <= 0) {
        f.run(node, {"tc", "qdisc", "del", "dev", port, "root"});
        return;
    }
    // burst: at least one 10 ms worth or 16 KB; queue limit: 50 ms of data.
    double bytesPerMs = mbit * 1000 / 8;
    auto burst = std::to_string(static_cast<long>(std::max(16000.0, bytesPerMs * 10)));
    auto limit = std::to_string(static_cast<long>(std::max(30000.0, bytesPerMs * 50)));
    f.runOk(node, {"tc", "qdisc", "replace", "dev", port, "root", "tbf", "rate",
                   std::to_string(mbit) + "mbit", "burst", burst, "limit", limit});
    attachEcnMarker(f.ns(node), port, mbit, kEcnMarkAfter);
}

}  // namespace twinrail::lab
