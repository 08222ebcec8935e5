#include "twinrail/netlink/link_stats.h"

#include "attrs.h"
#include "twinrail/common/unique_fd.h"
#include "twinrail/netlink/route_watch.h"

#include <linux/ethtool.h>
#include <linux/gen_stats.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/nexthop.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

namespace twinrail::netlink {
namespace {

using namespace detail;  // NOLINT(google-build-using-namespace)

using Fd = UniqueFd;

// Sends one dump request and calls `each` with every reply message; each is whole
// (nlmsg_len checked against what was received), so the decoders can trust nlmsg_len.
template <typename Header>
void dump(uint16_t type, const Header& header, const char* what,
          const std::function<void(const nlmsghdr*)>& each) {
    Fd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
    if (fd.get() < 0) {
        throw std::runtime_error(std::string("netlink socket for ") + what + ": " +
                                 std::strerror(errno));
    }
    struct {
        nlmsghdr nh;
        Header body;
    } req{};
    req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(Header));
    req.nh.nlmsg_type = type;
    req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    req.nh.nlmsg_seq = 1;
    req.body = header;
    if (::send(fd.get(), &req, req.nh.nlmsg_len, 0) < 0) {
        throw std::runtime_error(std::string("netlink dump of ") + what + ": " +
                                 std::strerror(errno));
    }
    // uint32_t elements: every message starts 4-aligned, as nlmsghdr needs.
    std::vector<uint32_t> buf(size_t{16} * 1024);
    for (;;) {
        ssize_t n = ::recv(fd.get(), buf.data(), buf.size() * sizeof(uint32_t), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            throw std::runtime_error(std::string("netlink dump of ") + what + ": " +
                                     std::strerror(errno));
        }
        Bytes rest(reinterpret_cast<const uint8_t*>(buf.data()), static_cast<size_t>(n));
        while (rest.size() >= sizeof(nlmsghdr)) {
            nlmsghdr nh{};
            std::memcpy(&nh, rest.data(), sizeof nh);
            if (nh.nlmsg_len < sizeof(nlmsghdr) || nh.nlmsg_len > rest.size()) break;
            if (nh.nlmsg_type == NLMSG_DONE) return;
            if (nh.nlmsg_type == NLMSG_ERROR) {
                nlmsgerr err{};
                if (nh.nlmsg_len >= NLMSG_LENGTH(sizeof err))
                    std::memcpy(&err, rest.data() + NLMSG_HDRLEN, sizeof err);
                throw std::runtime_error(std::string("netlink dump of ") + what + ": " +
                                         std::strerror(-err.error));
            }
            each(reinterpret_cast<const nlmsghdr*>(rest.data()));
            size_t step = NLMSG_ALIGN(nh.nlmsg_len);
            if (step >= rest.size()) break;
            rest = rest.subspan(step);
        }
    }
}

// A u32 at `offset` of a qdisc's extended stats, when the kernel's struct is that long.
std::optional<uint64_t> u32At(Bytes app, size_t offset) {
    if (app.size() < offset + sizeof(uint32_t)) return std::nullopt;
    uint32_t v = 0;
    std::memcpy(&v, app.data() + offset, sizeof v);
    return v;
}

std::optional<uint64_t> sum(std::optional<uint64_t> a, std::optional<uint64_t> b) {
    if (!a) return std::nullopt;
    return *a + b.value_or(0);  // ce_mark came later than ecn_mark: absent counts 0
}

std::optional<uint64_t> ecnMarks(const std::string& kind, Bytes app) {
    if (kind == "red") return u32At(app, offsetof(tc_red_xstats, marked));
    if (kind == "choke") return u32At(app, offsetof(tc_choke_xstats, marked));
    if (kind == "sfb") return u32At(app, offsetof(tc_sfb_xstats, marked));
    if (kind == "pie") return u32At(app, offsetof(tc_pie_xstats, ecn_mark));
    if (kind == "fq_pie") return u32At(app, offsetof(tc_fq_pie_xstats, ecn_mark));
    if (kind == "codel") {
        return sum(u32At(app, offsetof(tc_codel_xstats, ecn_mark)),
                   u32At(app, offsetof(tc_codel_xstats, ce_mark)));
    }
    if (kind == "fq_codel") {
        // A union of qdisc and class stats, told apart by `type`.
        auto type = u32At(app, offsetof(tc_fq_codel_xstats, type));
        if (!type || *type != TCA_FQ_CODEL_XSTATS_QDISC) return std::nullopt;
        constexpr size_t qd = offsetof(tc_fq_codel_xstats, qdisc_stats);
        return sum(u32At(app, qd + offsetof(tc_fq_codel_qd_stats, ecn_mark)),
                   u32At(app, qd + offsetof(tc_fq_codel_qd_stats, ce_mark)));
    }
    return std::nullopt;
}

}  // namespace

std::optional<LinkCounters> decodeLinkCounters(const nlmsghdr* msg) {
    auto b = body<ifinfomsg>(msg, RTM_NEWLINK);
    if (!b) return std::nullopt;
    const auto& [ifi, area] = *b;
    auto attrs = attributes(area);
    LinkCounters c;
    c.ifindex = ifi.ifi_index;
    c.name = text(attrs, IFLA_IFNAME);
    c.operUp = (ifi.ifi_flags & IFF_RUNNING) != 0;
    if (auto s = scalar<rtnl_link_stats64>(attrs, IFLA_STATS64)) {
        c.txBytes = s->tx_bytes;
        c.txPackets = s->tx_packets;
        c.txDropped = s->tx_dropped;
    }
    return c;
}

std::optional<QdiscStats> decodeQdisc(const nlmsghdr* msg) {
    auto b = body<tcmsg>(msg, RTM_NEWQDISC);
    if (!b) return std::nullopt;
    const auto& [tc, area] = *b;
    auto attrs = attributes(area);
    QdiscStats q;
    q.ifindex = tc.tcm_ifindex;
    q.root = tc.tcm_parent == TC_H_ROOT;
    q.kind = text(attrs, TCA_KIND);
    if (auto it = attrs.find(TCA_STATS2); it != attrs.end()) {
        auto stats = attributes(it->second);
        if (auto queue = scalar<gnet_stats_queue>(stats, TCA_STATS_QUEUE)) {
            q.backlogBytes = queue->backlog;
            q.qlen = queue->qlen;
            q.drops = queue->drops;
        }
        if (auto app = stats.find(TCA_STATS_APP); app != stats.end())
            q.ecnMarks = ecnMarks(q.kind, app->second);
    }
    if (auto it = attrs.find(TCA_OPTIONS); q.kind == "tbf" && it != attrs.end()) {
        auto opts = attributes(it->second);
        if (auto rate64 = scalar<uint64_t>(opts, TCA_TBF_RATE64)) {
            q.rateBps = *rate64 * 8;
        } else if (auto parms = scalar<tc_tbf_qopt>(opts, TCA_TBF_PARMS)) {
            q.rateBps = uint64_t{parms->rate.rate} * 8;
        }
    }
    return q;
}

std::optional<NexthopObject> decodeNexthop(const nlmsghdr* msg) {
    auto b = body<nhmsg>(msg, RTM_NEWNEXTHOP);
    if (!b) return std::nullopt;
    auto attrs = attributes(b->second);
    auto id = scalar<uint32_t>(attrs, NHA_ID);
    if (!id) return std::nullopt;
    NexthopObject nh;
    nh.id = *id;
    nh.single.ifindex = static_cast<int>(scalar<uint32_t>(attrs, NHA_OIF).value_or(0));
    if (auto gw = address(attrs, NHA_GATEWAY)) nh.single.gateway = *gw;
    if (auto it = attrs.find(NHA_GROUP); it != attrs.end()) {
        for (size_t off = 0; off + sizeof(nexthop_grp) <= it->second.size();
             off += sizeof(nexthop_grp)) {
            nexthop_grp g{};
            std::memcpy(&g, it->second.data() + off, sizeof g);
            // The kernel carries weight - 1 (0..255), as iproute2 shows it plus one.
            nh.group.emplace_back(g.id, uint32_t{g.weight} + 1);
        }
    }
    return nh;
}

std::optional<RouteWeights> decodeRouteWeights(const nlmsghdr* msg, int family, uint8_t protocol,
                                               const NexthopObjects& objects) {
    auto ev = decodeRouteEvent(msg);
    if (!ev || ev->removed || ev->route.protocol != protocol || ev->route.table != RT_TABLE_MAIN ||
        ev->route.dst.addr.family() != family)
        return std::nullopt;
    RouteWeights r{ev->route.dst, ev->route.nhid, std::move(ev->route.nexthops)};
    if (r.nhid != 0) {
        auto nh = resolveNexthops(r.nhid, objects);
        if (!nh) return std::nullopt;
        r.nexthops = std::move(*nh);
    }
    return r;
}

std::vector<LinkCounters> dumpLinkCounters() {
    std::vector<LinkCounters> out;
    ifinfomsg req{};
    req.ifi_family = AF_UNSPEC;
    dump<ifinfomsg>(RTM_GETLINK, req, "links", [&out](const nlmsghdr* msg) {
        if (auto c = decodeLinkCounters(msg)) out.push_back(std::move(*c));
    });
    return out;
}

std::vector<QdiscStats> dumpQdiscs() {
    std::vector<QdiscStats> out;
    tcmsg req{};
    req.tcm_family = AF_UNSPEC;
    dump<tcmsg>(RTM_GETQDISC, req, "qdiscs", [&out](const nlmsghdr* msg) {
        if (auto q = decodeQdisc(msg)) out.push_back(std::move(*q));
    });
    return out;
}

std::optional<uint64_t> linkSpeedBps(const std::string& ifname) {
    Fd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (fd.get() < 0 || ifname.size() >= IFNAMSIZ) return std::nullopt;
    ethtool_cmd cmd{};
    cmd.cmd = ETHTOOL_GSET;
    ifreq ifr{};
    std::memcpy(ifr.ifr_name, ifname.c_str(), ifname.size());
    ifr.ifr_data = reinterpret_cast<char*>(&cmd);
    if (::ioctl(fd.get(), SIOCETHTOOL, &ifr) < 0) return std::nullopt;
    uint32_t mbps = ethtool_cmd_speed(&cmd);
    if (mbps == 0 || mbps == static_cast<uint32_t>(SPEED_UNKNOWN)) return std::nullopt;
    return uint64_t{mbps} * 1000000;
}

std::vector<RouteWeights> dumpRouteWeights(int family, uint8_t protocol) {
    NexthopObjects objects;
    nhmsg nreq{};
    nreq.nh_family = AF_UNSPEC;
    dump<nhmsg>(RTM_GETNEXTHOP, nreq, "nexthops", [&objects](const nlmsghdr* msg) {
        if (auto nh = decodeNexthop(msg)) objects[nh->id] = std::move(*nh);
    });

    std::vector<RouteWeights> out;
    rtmsg rreq{};
    rreq.rtm_family = static_cast<unsigned char>(family);
    dump<rtmsg>(RTM_GETROUTE, rreq, "routes", [&](const nlmsghdr* msg) {
        if (auto r = decodeRouteWeights(msg, family, protocol, objects))
            out.push_back(std::move(*r));
    });
    return out;
}

}  // namespace twinrail::netlink
