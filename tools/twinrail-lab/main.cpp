// twinrail-lab: rehearse twinrail on a fabric of network namespaces on this machine.
// `demo` builds the mini fabric (spine, two leaves, hosts), runs Redis and hostrouted on
// both leaves, shows a host's route travel through BGP, and tears everything down.
#include <signal.h>
#include <unistd.h>


#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "twinrail/common/sysexits.h"
#include "twinrail/lab/fabric.h"
#include "twinrail/lab/process.h"
#include "twinrail/lab/redis_server.h"

namespace lab = twinrail::lab;
using namespace std::chrono_literals;

namespace {

constexpr const char* kUsage = R"(usage: twinrail-lab demo [--hostrouted PATH] [--keep-logs]
  demo   build a spine/leaf fabric in namespaces with real FRR and Redis, run hostrouted
         on both leaves, show host routes crossing BGP, then remove everything
)";

void step(const std::string& title) { std::cout << "\n\033[1m== " << title << "\033[0m\n"; }

void show(const lab::Fabric& f, const std::string& node, const std::string& cmd) {
    std::cout << "[" << node << "]$ " << cmd << "\n" << f.exec(node, cmd).out;
}

class Demo {
public:
    Demo(std::string hostrouted, bool keepLogs)
        : hostrouted_(std::move(hostrouted)), keepLogs_(keepLogs),
          fabric_(lab::uniquePrefix("demo")), dir_("/tmp/" + fabric_.prefix()) {}

    ~Demo() {
        for (auto& d : daemons_) d.stop();
        for (auto& r : redis_) r->stop();
        fabric_.teardown();
        if (!keepLogs_) std::filesystem::remove_all(dir_);
    }

    int run() {
        std::filesystem::create_directories(dir_);
        step("Building the fabric: spine s1, leaves l1 and l2, hosts h1 (behind l1), h2 (behind l2)");
        lab::buildMiniFabric(fabric_);
        std::cout << fabric_.vtysh("l2", "show bgp summary") ;
        step("Starting Redis and hostrouted on each leaf (manage_frr=true)");
        for (const std::string leaf : {"l1", "l2"}) startLeaf(leaf);
        step("h1 talks to its gateway: l1 learns it as a neighbor");
        fabric_.exec("h1", "ping -c1 -W1 10.1.1.1; ping -c1 -W1 2001:db8:1::1");
        lab::waitUntil([this] { return has("l2", "ip -6 route show 2001:db8:1::10", "2001"); }, 15s);
        show(fabric_, "l1", "ip neigh show dev swp3");
        step("hostrouted turned it into host routes (IPv4 in table 10, IPv6 in main, proto 201)");
        show(fabric_, "l1", "ip route show table 10; ip -6 route show proto 201");
        step("FRR on l1 imports and advertises them (lines hostrouted added)");
        std::cout << fabric_.vtysh("l1", "show running-config") << "\n";
        step("l2 learned them through the spine, over BGP unnumbered");
        show(fabric_, "l2", "ip route show 10.1.1.10; ip -6 route show 2001:db8:1::10");
        step("STATE_DB on l1, as an operator sees it");
        std::this_thread::sleep_for(1100ms);  // the stats row is published once a second
        std::cout << redis_[0]->cli(6, "--no-raw HGETALL 'HOST_ROUTE_TABLE|10.1.1.10'");
        std::cout << redis_[0]->cli(6, "--no-raw HGETALL 'HOST_ROUTE_STATS|global'");
        step("h2 reaches h1 across the fabric");
        show(fabric_, "h2", "ping -c3 -i0.2 10.1.1.10 | tail -2");
        step("h1 goes silent (drops its address): withdrawn after the 2 s holdtime");
        fabric_.exec("h1", "ip addr del 10.1.1.10/24 dev eth0");
        auto t0 = std::chrono::steady_clock::now();
        bool gone = lab::waitUntil([this] { return !has("l2", "ip route show 10.1.1.10", "10.1.1.10"); }, 10s);
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - t0).count();
        std::cout << (gone ? "gone from l2's FIB after " + std::to_string(ms) + " ms\n"
                           : "STILL PRESENT on l2 (unexpected)\n");
        step("hostrouted on l1 is killed with -9 and restarted: the IPv6 route stays");
        daemons_[0].signal(SIGKILL);
        daemons_[0].wait(5s);
        daemons_[0] = startDaemon("l1");
        show(fabric_, "l2", "ip -6 route show 2001:db8:1::10");
        step("Tearing down");
        return gone ? twinrail::exitcode::kOk : twinrail::exitcode::kSoftware;
    }

private:
    bool has(const std::string& node, const std::string& cmd, const std::string& what) const {
        return fabric_.exec(node, cmd).out.find(what) != std::string::npos;
    }

    lab::ChildProcess startDaemon(const std::string& leaf) {
        size_t idx = leaf == "l1" ? 0 : 1;
        lab::ChildProcess p({"ip", "netns", "exec", fabric_.ns(leaf), hostrouted_, "--config",
                             dir_ + "/" + leaf + ".json", "--redis-socket", redis_[idx]->socket(),
                             "--frr-pathspace", fabric_.ns(leaf)},
                            dir_ + "/hostrouted-" + leaf + "-" + std::to_string(starts_++) + ".log");
        lab::waitUntil([&p] { return p.log().find("start-up reconcile") != std::string::npos; }, 20s);
        std::string log = p.log();
        auto at = log.rfind("start-up");
        std::cout << "  " << leaf << ": " << log.substr(at, log.find('\n', at) - at + 1);
        return p;
    }

    void startLeaf(const std::string& leaf) {
        std::ofstream(dir_ + "/" + leaf + ".json") << R"({
  "HOSTROUTED": {"global": {"keepalive": "0.5", "holdtime": "2", "manage_frr": "true"}},
  "HOSTROUTED_INTERFACE": {"swp3": {}}
})";
        redis_.push_back(std::make_unique<lab::RedisServer>(dir_ + "/redis-" + leaf));
        redis_.back()->start();
        daemons_.push_back(startDaemon(leaf));
    }

    std::string hostrouted_;
    bool keepLogs_;
    lab::Fabric fabric_;
    std::string dir_;
    std::vector<std::unique_ptr<lab::RedisServer>> redis_;
    std::vector<lab::ChildProcess> daemons_;
    int starts_ = 0;  // one log per start, so a restart is not mistaken for the last one
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || std::string(argv[1]) != "demo") {
        std::cerr << kUsage;
        return twinrail::exitcode::kUsage;
    }
    std::string hostrouted = "hostrouted";
    bool keep = false;
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--hostrouted" && i + 1 < argc) hostrouted = argv[++i];
        else if (a == "--keep-logs") keep = true;
        else {
            std::cerr << kUsage;
            return twinrail::exitcode::kUsage;
        }
    }
    if (geteuid() != 0) {
        std::cerr << "twinrail-lab: needs root (network namespaces, FRR)\n";
        return twinrail::exitcode::kUsage;
    }
    try {
        Demo demo(hostrouted, keep);
        return demo.run();
    } catch (const std::exception& e) {
        std::cerr << "twinrail-lab: " << e.what() << "\n";
        return twinrail::exitcode::kSoftware;
    }
}
