// hostrouted benchmark on the mini fabric (real FRR, real kernel). Writes JSON.
//  bulk:    N neighbors appear on l1:swp4 -> time until N /32s are in l1 table 10, and in
//           l2's FIB via BGP. Baseline in the same run: the same N routes written straight
//           into table 10 with `ip -batch`.
//  latency: neighbor notification -> route notification, one host at a time.
//  memory:  hostrouted RSS at the largest N.
//  cpu:     hostrouted CPU with 10k live hosts (they answer ARP) and probing on.
#include <fcntl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "twinrail/lab/fabric.h"
#include "twinrail/lab/process.h"
#include "twinrail/netlink/parse.h"
#include "twinrail/netlink/route_table.h"

namespace lab = twinrail::lab;
namespace nl = twinrail::netlink;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

double secondsSince(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string hostIp(int i) {  // 10.16.0.0/14 holds 262k addresses
    return "10." + std::to_string(16 + i / 65536) + "." + std::to_string((i / 256) % 256) + "." +
           std::to_string(i % 256);
}
int hostIndex(int i) {
    return i + 256;
}  // skip 10.16.0.x (our own address lives there)

class Bench {
  public:
    Bench(std::string hostrouted, std::vector<int> sizes)
        : hostrouted_(std::move(hostrouted)),
          sizes_(std::move(sizes)),
          fabric_(lab::uniquePrefix("bn")),
          dir_("/tmp/" + fabric_.prefix()) {}
    ~Bench() {
        if (homeFd_ >= 0) setns(homeFd_, CLONE_NEWNET);
        daemon_.stop();
        std::istringstream gc(savedGc_);
        int t1 = 128, t2 = 512, t3 = 1024;
        if (gc >> t1 >> t2 >> t3) {
            lab::run({"sysctl", "-qw", "net.ipv4.neigh.default.gc_thresh1=" + std::to_string(t1),
                      "net.ipv4.neigh.default.gc_thresh2=" + std::to_string(t2),
                      "net.ipv4.neigh.default.gc_thresh3=" + std::to_string(t3)});
        }
        fabric_.teardown();
        std::filesystem::remove_all(dir_);
    }

    nlohmann::json run() {
        std::filesystem::create_directories(dir_);
        lab::buildMiniFabric(fabric_);
        // The neighbor table limits are machine-wide (not per namespace); raised for the
        // run and restored by the destructor.
        savedGc_ =
            lab::runOk({"sysctl", "-n", "net.ipv4.neigh.default.gc_thresh1",
                        "net.ipv4.neigh.default.gc_thresh2", "net.ipv4.neigh.default.gc_thresh3"});
        lab::runOk({"sysctl", "-qw", "net.ipv4.neigh.default.gc_thresh1=300000",
                    "net.ipv4.neigh.default.gc_thresh2=300000",
                    "net.ipv4.neigh.default.gc_thresh3=300000"});
        fabric_.runOk("l1", {"ip", "addr", "add", "10.16.0.1/14", "dev", "swp4"});
        fabric_.runOk("h3", {"ip", "addr", "add", "10.16.0.2/14", "dev", "eth0"});
        h3Mac_ = fabric_.runOk("h3", {"cat", "/sys/class/net/eth0/address"});
        h3Mac_.erase(h3Mac_.find_last_not_of('\n') + 1);
        homeFd_ = open("/proc/self/ns/net", O_RDONLY);
        l1Fd_ = open(("/var/run/netns/" + fabric_.ns("l1")).c_str(), O_RDONLY);
        // The baseline needs FRR to import table 10 too (hostrouted adds this itself).
        lab::runOk({"vtysh", "-N", fabric_.ns("l1"), "-c", "configure terminal", "-c",
                    "ip import-table 10", "-c", "router bgp 65101", "-c",
                    "address-family ipv4 unicast", "-c", "redistribute table 10"});
        l2Fd_ = open(("/var/run/netns/" + fabric_.ns("l2")).c_str(), O_RDONLY);
        nlohmann::json out;
        out["machine"] = {{"nproc", std::thread::hardware_concurrency()}};
        // Largest bulk run last: after a mass flush of 100k routes zebra has been seen to
        // keep some deleted ones, which would spoil any phase after it.
        std::cerr << "latency\n";
        out["latency"] = latency(500);
        std::cerr << "idle cpu\n";
        out["idle_cpu"] = idleCpu(10000);
        for (int n : sizes_) {
            // Baseline and hostrouted alternate in one run; the median trial is reported.
            int trials = n <= 10000 ? 3 : 1;
            std::vector<nlohmann::json> rows;
            for (int t = 0; t < trials; ++t) {
                std::cerr << "bulk N=" << n << " trial " << t + 1 << "/" << trials << "\n";
                auto base = baseline(n);
                double input = neighborsAlone(n);
                auto hr = withHostrouted(n);
                nlohmann::json row = {{"n", n}, {"baseline_ip_batch", base}, {"hostrouted", hr}};
                // How long the input itself takes with no daemon running, and how far
                // hostrouted's last route trails its last input.
                row["neighbors_alone_s"] = input;
                row["hostrouted_lag_after_input_s"] =
                    hr["table_s"].get<double>() - hr["neighbors_written_s"].get<double>();
                row["ratio_table"] = hr["table_s"].get<double>() / base["table_s"].get<double>();
                row["ratio_remote_fib"] =
                    hr["remote_fib_s"].get<double>() / base["remote_fib_s"].get<double>();
                rows.push_back(row);
            }
            std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
                return a["ratio_remote_fib"].template get<double>() <
                       b["ratio_remote_fib"].template get<double>();
            });
            nlohmann::json median = rows[rows.size() / 2];
            median["trials"] = rows;
            out["bulk"].push_back(median);
        }
        out["zebra_stale_routes_after_mass_flush"] = zebraStaleAfterFlush_;
        return out;
    }

  private:
    // Runs in the namespace only for the dump: this process must be back in its own
    // namespace before teardown kills every process left in the fabric's namespaces.
    size_t countRoutes(int nsFd, uint32_t table, uint8_t proto) {
        setns(nsFd, CLONE_NEWNET);
        std::vector<nl::HostRoute> routes;
        {
            nl::KernelRouteTable rt;
            routes = rt.dump(AF_INET, table, proto);
        }
        setns(homeFd_, CLONE_NEWNET);
        return static_cast<size_t>(
            std::count_if(routes.begin(), routes.end(), [](const nl::HostRoute& r) {
                return r.dst.data()[0] == 10 && (r.dst.data()[1] & 0xfc) == 16;  // 10.16.0.0/14
            }));
    }

    // Seconds until `count()` reaches n (polled), or a negative value on timeout.
    template <typename Count>
    double until(Clock::time_point t0, size_t n, Count count, std::chrono::seconds limit) {
        while (secondsSince(t0) < static_cast<double>(limit.count())) {
            if (count() >= n) return secondsSince(t0);
            std::this_thread::sleep_for(2ms);
        }
        return -1;
    }

    void writeBatch(const std::string& name, int n, const std::string& fmtBefore,
                    const std::string& fmtAfter) {
        std::ofstream f(dir_ + "/" + name);
        for (int i = 0; i < n; ++i) f << fmtBefore << hostIp(hostIndex(i)) << fmtAfter << "\n";
    }

    bool remoteDrained(std::chrono::seconds limit) {
        auto deadline = Clock::now() + limit;
        while (countRoutes(l2Fd_, RT_TABLE_MAIN, RTPROT_BGP) > 0) {
            if (Clock::now() > deadline) return false;
            std::this_thread::sleep_for(50ms);
        }
        return true;
    }

    // The next measurement starts from an empty remote FIB.
    void clean() {
        fabric_.run("l1", {"ip", "neigh", "flush", "dev", "swp4", "nud", "all"});
        fabric_.run("l1", {"ip", "route", "flush", "table", "10"});
        if (remoteDrained(60s)) return;
        // Seen at 100k: zebra misses some deletions of a mass flush and keeps advertising
        // routes that are gone from the table. Re-importing the table re-reads it.
        size_t stale = countRoutes(l2Fd_, RT_TABLE_MAIN, RTPROT_BGP);
        std::cerr << "zebra kept " << stale << " deleted routes after a flush; re-importing\n";
        zebraStaleAfterFlush_ = std::max(zebraStaleAfterFlush_, stale);
        lab::runOk({"vtysh", "-N", fabric_.ns("l1"), "-c", "configure terminal", "-c",
                    "no ip import-table 10", "-c", "ip import-table 10"});
        if (!remoteDrained(120s)) throw std::runtime_error("remote FIB did not drain");
    }

    nlohmann::json baseline(int n) {
        clean();
        writeBatch("routes.batch", n, "route add ", "/32 dev swp4 table 10 proto 201");
        auto t0 = Clock::now();
        fabric_.runOk("l1", {"ip", "-batch", dir_ + "/routes.batch"});
        double table = secondsSince(t0);
        double remote = until(
            t0, static_cast<size_t>(n),
            [this] { return countRoutes(l2Fd_, RT_TABLE_MAIN, RTPROT_BGP); }, 300s);
        return {{"table_s", table}, {"remote_fib_s", remote}};
    }

    void startDaemon(const std::string& keepalive, const std::string& holdtime = "9") {
        std::ofstream(dir_ + "/hr.json")
            << nlohmann::json{{"HOSTROUTED",
                               {{"global",
                                 {{"keepalive", keepalive},
                                  {"holdtime", holdtime},
                                  {"manage_frr", "true"},
                                  {"max_routes", "300000"},
                                  {"max_routes_per_port", "300000"},
                                  {"route_rate", "10000000"},
                                  {"route_burst", "10000000"},
                                  {"audit_interval", "0"}}}}},
                              {"HOSTROUTED_INTERFACE", {{"swp4", nlohmann::json::object()}}}}
                   .dump();
        daemon_ = lab::ChildProcess(
            {"ip", "netns", "exec", fabric_.ns("l1"), hostrouted_, "--config", dir_ + "/hr.json",
             "--frr-pathspace", fabric_.ns("l1"), "--log-level", "notice"},
            dir_ + "/hostrouted.log", lab::ChildOptions{.notify = true});
        daemon_.waitReady(30s);
        std::this_thread::sleep_for(1s);  // FRR check done
    }

    long rssKb() const {
        std::ifstream f("/proc/" + std::to_string(daemon_.pid()) + "/status");
        std::string line;
        while (std::getline(f, line))
            if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
        return -1;
    }

    double neighborsAlone(int n) {
        clean();
        writeBatch("neigh.batch", n, "neigh add ", " lladdr " + h3Mac_ + " dev swp4 nud reachable");
        auto t0 = Clock::now();
        fabric_.runOk("l1", {"ip", "-batch", dir_ + "/neigh.batch"});
        return secondsSince(t0);
    }

    long cpuTicks() const {
        std::ifstream f("/proc/" + std::to_string(daemon_.pid()) + "/stat");
        std::string s((std::istreambuf_iterator<char>(f)), {});
        std::istringstream in(s.substr(s.rfind(')') + 2));
        std::string field;
        long total = 0;
        for (int i = 3; i <= 15 && in >> field; ++i)
            if (i == 14 || i == 15) total += std::stol(field);  // utime, stime
        return total;
    }

    // Probing is on, with a holdtime longer than the run: the fake hosts do not answer,
    // and expiring them mid-measurement would measure the holdtime, not the pipeline.
    nlohmann::json withHostrouted(int n) {
        clean();
        startDaemon("60", "180");
        long cpu0 = cpuTicks();
        writeBatch("neigh.batch", n, "neigh add ", " lladdr " + h3Mac_ + " dev swp4 nud reachable");
        auto t0 = Clock::now();
        fabric_.runOk("l1", {"ip", "-batch", dir_ + "/neigh.batch"});
        double neighDone = secondsSince(t0);
        double table = until(
            t0, static_cast<size_t>(n), [this] { return countRoutes(l1Fd_, 10, 201); }, 300s);
        double remote = until(
            t0, static_cast<size_t>(n),
            [this] { return countRoutes(l2Fd_, RT_TABLE_MAIN, RTPROT_BGP); }, 300s);
        double cpu =
            static_cast<double>(cpuTicks() - cpu0) / static_cast<double>(sysconf(_SC_CLK_TCK));
        nlohmann::json r = {{"neighbors_written_s", neighDone},
                            {"table_s", table},
                            {"remote_fib_s", remote},
                            {"rss_kib", rssKb()},
                            {"hostrouted_cpu_s", cpu}};
        daemon_.stop();
        return r;
    }

    // t0: right after our RTM_NEWNEIGH returns (the kernel has created the entry and
    // notified every listener, hostrouted included); t1: the route notification arrives.
    nlohmann::json latency(int samples) {
        clean();
        startDaemon("3");
        int ifindex = std::stoi(fabric_.runOk("l1", {"cat", "/sys/class/net/swp4/ifindex"}));
        auto mac = *parseMac(h3Mac_);
        setns(l1Fd_, CLONE_NEWNET);
        int watch = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        int send = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        setns(homeFd_, CLONE_NEWNET);
        sockaddr_nl sa{};
        sa.nl_family = AF_NETLINK;
        sa.nl_groups = RTMGRP_IPV4_ROUTE;
        (void)bind(watch, reinterpret_cast<sockaddr*>(&sa), sizeof(sa));
        std::vector<double> us;
        std::vector<uint8_t> buf(1 << 16);
        for (int i = 0; i < samples; ++i) {
            auto ip = *twinrail::IpAddr::parse(hostIp(hostIndex(200000 + i)));
            auto t0 = sendNeighbor(send, ifindex, ip, mac);
            Clock::time_point t1{};
            auto deadline = Clock::now() + 2s;
            while (t1 == Clock::time_point{} && Clock::now() < deadline) {
                pollfd p{watch, POLLIN, 0};
                if (poll(&p, 1, 100) <= 0) continue;
                ssize_t len = recv(watch, buf.data(), buf.size(), 0);
                auto now = Clock::now();
                int left = static_cast<int>(len);
                for (auto* h = reinterpret_cast<nlmsghdr*>(buf.data());
                     left > 0 && NLMSG_OK(h, static_cast<unsigned>(left));
                     h = NLMSG_NEXT(h, left)) {
                    auto d = nl::decode(h);
                    if (auto* r = std::get_if<nl::RouteMsg>(&d);
                        r && r->route.table == 10u && r->route.dst == ip)
                        t1 = now;
                }
            }
            if (t1 != Clock::time_point{})
                us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
            std::this_thread::sleep_for(2ms);  // independent samples, not a queue
        }
        close(watch);
        close(send);
        daemon_.stop();
        std::sort(us.begin(), us.end());
        auto pct = [&us](double p) {
            if (us.empty()) return -1.0;
            return us[static_cast<size_t>(p * static_cast<double>(us.size() - 1))];
        };
        return {{"samples", us.size()},
                {"p50_ms", pct(0.5) / 1000},
                {"p99_ms", pct(0.99) / 1000},
                {"max_ms", us.empty() ? -1.0 : us.back() / 1000}};
    }

    static std::optional<twinrail::MacAddr> parseMac(const std::string& s) {
        twinrail::MacAddr m{};
        unsigned b[6];
        if (std::sscanf(s.c_str(), "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) !=
            6)
            return std::nullopt;
        for (int i = 0; i < 6; ++i) m[static_cast<size_t>(i)] = static_cast<uint8_t>(b[i]);
        return m;
    }

    static Clock::time_point sendNeighbor(int fd, int ifindex, const twinrail::IpAddr& ip,
                                          const twinrail::MacAddr& mac) {
        struct {
            nlmsghdr h;
            ndmsg ndm;
            char attrs[64];
        } req{};
        req.h.nlmsg_type = RTM_NEWNEIGH;
        req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_REPLACE;
        req.ndm.ndm_family = AF_INET;
        req.ndm.ndm_ifindex = ifindex;
        req.ndm.ndm_state = NUD_REACHABLE;
        size_t len = NLMSG_LENGTH(sizeof(ndmsg));
        auto put = [&req, &len](uint16_t type, const void* data, size_t n) {
            auto* rta = reinterpret_cast<rtattr*>(reinterpret_cast<char*>(&req) + NLMSG_ALIGN(len));
            rta->rta_type = type;
            rta->rta_len = static_cast<uint16_t>(RTA_LENGTH(n));
            std::memcpy(RTA_DATA(rta), data, n);
            len = NLMSG_ALIGN(len) + RTA_ALIGN(rta->rta_len);
        };
        put(NDA_DST, ip.data(), 4);
        put(NDA_LLADDR, mac.data(), 6);
        req.h.nlmsg_len = static_cast<uint32_t>(len);
        sockaddr_nl kernel{};
        kernel.nl_family = AF_NETLINK;
        sendto(fd, &req, len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof(kernel));
        return Clock::now();
    }

    nlohmann::json idleCpu(int n) {
        clean();
        // Live hosts: h3 owns every address, so each probe gets a real ARP reply.
        writeBatch("addr.batch", n, "addr add ", "/14 dev eth0");
        fabric_.runOk("h3", {"ip", "-batch", dir_ + "/addr.batch"});
        startDaemon("3");
        writeBatch("neigh.batch", n, "neigh add ", " lladdr " + h3Mac_ + " dev swp4 nud stale");
        fabric_.runOk("l1", {"ip", "-batch", dir_ + "/neigh.batch"});
        std::this_thread::sleep_for(12s);  // past one holdtime: every host has been probed
        size_t routesBefore = countRoutes(l1Fd_, 10, 201);
        long c0 = cpuTicks();
        auto t0 = Clock::now();
        std::this_thread::sleep_for(20s);
        double cpu = static_cast<double>(cpuTicks() - c0) /
                     static_cast<double>(sysconf(_SC_CLK_TCK)) / secondsSince(t0);
        size_t routesAfter = countRoutes(l1Fd_, 10, 201);
        nlohmann::json r = {{"hosts", n},
                            {"keepalive_s", 3},
                            {"cpu_percent_of_one_core", cpu * 100},
                            {"routes_at_start", routesBefore},
                            {"routes_at_end", routesAfter},
                            {"rss_kib", rssKb()}};
        daemon_.stop();
        return r;
    }

    std::string hostrouted_;
    std::vector<int> sizes_;
    lab::Fabric fabric_;
    std::string dir_;
    lab::ChildProcess daemon_;
    std::string h3Mac_;
    std::string savedGc_;
    size_t zebraStaleAfterFlush_ = 0;
    int homeFd_ = -1, l1Fd_ = -1, l2Fd_ = -1;
};

}  // namespace

int main(int argc, char** argv) {
    std::string hostrouted = argc > 1 ? argv[1] : "hostrouted";
    std::string outPath = argc > 2 ? argv[2] : "hostrouted-bench.json";
    std::vector<int> sizes{1000, 10000, 100000};
    if (argc > 3) {
        sizes.clear();
        std::istringstream in(argv[3]);
        for (std::string s; std::getline(in, s, ',');) sizes.push_back(std::stoi(s));
    }
    try {
        Bench bench(hostrouted, sizes);
        auto result = bench.run();
        std::ofstream(outPath) << result.dump(2) << "\n";
        std::cout << result.dump(2) << "\n";
    } catch (const std::exception& e) {
        std::cerr << "bench: " << e.what() << "\n";
        return 1;
    }
}
