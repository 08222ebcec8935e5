// Writes rtnetlink messages of the current network namespace as fuzz seeds:
//   capture_netlink --out DIR [--listen SECONDS]
// Dumps links, addresses, neighbors, IPv4/IPv6 routes, nexthop objects and qdiscs; each
// message becomes DIR/<kind>-<hash>.bin (identical messages once), and each whole dump
// DIR/dump-<kind>.bin (the messages back to back, as one recv() gives them). With
// --listen it then also records the events of the route, link, address, neighbor and
// nexthop groups for that long (deletes included). Run it with `ip netns exec NS`.
// No libnl: the seeds are the kernel's bytes exactly as received.
#include <linux/netlink.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace {

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "capture_netlink: %s: %s\n", what.c_str(), std::strerror(errno));
    std::exit(1);
}

std::string kindOf(uint16_t type) {
    switch (type) {
        case RTM_NEWLINK:
            return "newlink";
        case RTM_DELLINK:
            return "dellink";
        case RTM_NEWADDR:
            return "newaddr";
        case RTM_DELADDR:
            return "deladdr";
        case RTM_NEWNEIGH:
            return "newneigh";
        case RTM_DELNEIGH:
            return "delneigh";
        case RTM_NEWROUTE:
            return "newroute";
        case RTM_DELROUTE:
            return "delroute";
        case RTM_NEWNEXTHOP:
            return "newnexthop";
        case RTM_DELNEXTHOP:
            return "delnexthop";
        case RTM_NEWQDISC:
            return "newqdisc";
        case RTM_DELQDISC:
            return "delqdisc";
        default:
            return "type" + std::to_string(type);
    }
}

// FNV-1a: a stable file name per distinct message, so re-runs do not add duplicates.
uint64_t hash(const uint8_t* p, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

void writeFile(const std::string& path, const uint8_t* p, size_t n) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(p), static_cast<std::streamsize>(n));
    if (!out) die("write " + path);
}

struct Writer {
    std::string dir;
    std::set<uint64_t> seen;
    size_t written = 0;
    void message(const uint8_t* p, size_t n) {
        nlmsghdr nh{};
        std::memcpy(&nh, p, sizeof nh);
        uint64_t h = hash(p, n);
        if (!seen.insert(h).second) return;
        char name[32];
        std::snprintf(name, sizeof name, "-%016llx.bin", static_cast<unsigned long long>(h));
        writeFile(dir + "/" + kindOf(nh.nlmsg_type) + name, p, n);
        ++written;
    }
};

// Calls `each` for every whole message of one datagram; false at NLMSG_DONE.
template <typename Fn>
bool walk(const uint8_t* buf, size_t n, Fn&& each) {
    while (n >= sizeof(nlmsghdr)) {
        nlmsghdr nh{};
        std::memcpy(&nh, buf, sizeof nh);
        if (nh.nlmsg_len < sizeof(nlmsghdr) || nh.nlmsg_len > n) break;
        if (nh.nlmsg_type == NLMSG_DONE) return false;
        if (nh.nlmsg_type == NLMSG_ERROR) {
            nlmsgerr err{};
            if (nh.nlmsg_len >= NLMSG_LENGTH(sizeof err))
                std::memcpy(&err, buf + NLMSG_HDRLEN, sizeof err);
            errno = -err.error;
            die("dump refused");
        }
        each(buf, nh.nlmsg_len);
        size_t step = NLMSG_ALIGN(nh.nlmsg_len);
        if (step >= n) break;
        buf += step;
        n -= step;
    }
    return true;
}

template <typename Header>
void dump(Writer& w, uint16_t type, Header header, const std::string& name) {
    int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) die("netlink socket");
    struct {
        nlmsghdr nh;
        Header body;
    } req{};
    req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(Header));
    req.nh.nlmsg_type = type;
    req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    req.nh.nlmsg_seq = 1;
    req.body = header;
    if (::send(fd, &req, req.nh.nlmsg_len, 0) < 0) die("send " + name);
    std::vector<uint32_t> buf(size_t{64} * 1024);  // 4-aligned, as nlmsghdr needs
    std::vector<uint8_t> whole;
    for (bool more = true; more;) {
        ssize_t n = ::recv(fd, buf.data(), buf.size() * sizeof(uint32_t), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) die("recv " + name);
        const auto* bytes = reinterpret_cast<const uint8_t*>(buf.data());
        more = walk(bytes, static_cast<size_t>(n), [&](const uint8_t* p, size_t len) {
            w.message(p, len);
            whole.insert(whole.end(), p, p + NLMSG_ALIGN(len));
        });
    }
    ::close(fd);
    writeFile(w.dir + "/dump-" + name + ".bin", whole.data(), whole.size());
    std::printf("%s: %zu bytes\n", name.c_str(), whole.size());
}

void listen(Writer& w, int seconds) {
    int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) die("netlink socket");
    sockaddr_nl sa{};
    sa.nl_family = AF_NETLINK;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0) die("bind");
    for (int group : {RTNLGRP_LINK, RTNLGRP_NEIGH, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR,
                      RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE, RTNLGRP_NEXTHOP}) {
        if (::setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof group) < 0)
            die("join group " + std::to_string(group));
    }
    std::vector<uint32_t> buf(size_t{64} * 1024);
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < end) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 200) <= 0) continue;
        ssize_t n = ::recv(fd, buf.data(), buf.size() * sizeof(uint32_t), 0);
        if (n <= 0) continue;  // ENOBUFS: events were dropped; keep what comes next
        walk(reinterpret_cast<const uint8_t*>(buf.data()), static_cast<size_t>(n),
             [&w](const uint8_t* msg, size_t len) { w.message(msg, len); });
    }
    ::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
    Writer w;
    int listenSeconds = 0;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--out" && i + 1 < argc) {
            w.dir = argv[++i];
        } else if (a == "--listen" && i + 1 < argc) {
            listenSeconds = std::atoi(argv[++i]);
        } else {
            std::fprintf(stderr, "usage: capture_netlink --out DIR [--listen SECONDS]\n");
            return 64;
        }
    }
    if (w.dir.empty()) {
        std::fprintf(stderr, "usage: capture_netlink --out DIR [--listen SECONDS]\n");
        return 64;
    }
    dump(w, RTM_GETLINK, ifinfomsg{}, "links");
    dump(w, RTM_GETADDR, ifaddrmsg{}, "addresses");
    dump(w, RTM_GETNEIGH, ndmsg{}, "neighbors");
    rtmsg v4{};
    v4.rtm_family = AF_INET;
    dump(w, RTM_GETROUTE, v4, "routes4");
    rtmsg v6{};
    v6.rtm_family = AF_INET6;
    dump(w, RTM_GETROUTE, v6, "routes6");
    dump(w, RTM_GETNEXTHOP, nhmsg{}, "nexthops");
    dump(w, RTM_GETQDISC, tcmsg{}, "qdiscs");
    if (listenSeconds > 0) listen(w, listenSeconds);
    std::printf("%zu distinct messages in %s\n", w.written, w.dir.c_str());
    return 0;
}
