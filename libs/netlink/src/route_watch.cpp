#include "twinrail/netlink/route_watch.h"

#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "attrs.h"

namespace twinrail::netlink {
namespace {

using namespace detail;  // NOLINT(google-build-using-namespace)

constexpr int kReceiveBuffer = 32 * 1024 * 1024;
constexpr int kMaxInterruptedRetries = 5;

std::optional<IpAddr> via(const std::map<uint16_t, Bytes>& attrs) {
    auto it = attrs.find(RTA_VIA);
    if (it == attrs.end() || it->second.size() < sizeof(rtvia)) return std::nullopt;
    rtvia v{};
    std::memcpy(&v, it->second.data(), sizeof v);
    Bytes addr = it->second.subspan(sizeof v);
    if (v.rtvia_family == AF_INET && addr.size() >= 4) return IpAddr::v4(addr.data());
    if (v.rtvia_family == AF_INET6 && addr.size() >= 16) return IpAddr::v6(addr.data());
    return std::nullopt;
}

std::optional<IpAddr> gatewayOf(const std::map<uint16_t, Bytes>& attrs) {
    if (auto gw = address(attrs, RTA_GATEWAY)) return gw;
    return via(attrs);
}

void inlineNexthops(const std::map<uint16_t, Bytes>& attrs, const rtmsg& rt, KernelRoute& r) {
    if (auto it = attrs.find(RTA_MULTIPATH); it != attrs.end()) {
        Bytes mp = it->second;
        while (mp.size() >= sizeof(rtnexthop)) {
            rtnexthop rtnh{};
            std::memcpy(&rtnh, mp.data(), sizeof rtnh);
            if (rtnh.rtnh_len < sizeof rtnh || rtnh.rtnh_len > mp.size()) break;
            auto nattrs = attributes(
                mp.subspan(RTNH_ALIGN(sizeof rtnh), rtnh.rtnh_len - RTNH_ALIGN(sizeof rtnh)));
            // rtnh_hops is weight - 1, as in nexthop_grp.
            r.nexthops.push_back({rtnh.rtnh_ifindex, gatewayOf(nattrs).value_or(IpAddr{}),
                                  uint32_t{rtnh.rtnh_hops} + 1,
                                  (rtnh.rtnh_flags & RTNH_F_ONLINK) != 0});
            size_t step = RTNH_ALIGN(rtnh.rtnh_len);
            if (step >= mp.size()) break;
            mp = mp.subspan(step);
        }
        return;
    }
    auto oif = scalar<uint32_t>(attrs, RTA_OIF);
    auto gw = gatewayOf(attrs);
    if (!oif && !gw) return;  // throw, blackhole, unreachable
    r.nexthops.push_back({static_cast<int>(oif.value_or(0)), gw.value_or(IpAddr{}), 1,
                          (rt.rtm_flags & RTNH_F_ONLINK) != 0});
}

}  // namespace

RouteKey keyOf(const KernelRoute& r) {
    int oif = 0;
    if (r.nhid == 0 && r.nexthops.size() == 1 && r.nexthops[0].gateway.family() == 0)
        oif = r.nexthops[0].ifindex;
    return {r.table, r.dst, r.metric, oif};
}

std::optional<RouteEvent> decodeRouteEvent(const nlmsghdr* msg) {
    if (msg->nlmsg_type != RTM_NEWROUTE && msg->nlmsg_type != RTM_DELROUTE) return std::nullopt;
    auto b = body<rtmsg>(msg, msg->nlmsg_type);
    if (!b) return std::nullopt;
    const auto& [rt, area] = *b;
    if ((rt.rtm_flags & RTM_F_CLONED) != 0) return std::nullopt;
    if (rt.rtm_family != AF_INET && rt.rtm_family != AF_INET6) return std::nullopt;
    auto attrs = attributes(area);
    RouteEvent ev;
    ev.removed = msg->nlmsg_type == RTM_DELROUTE;
    KernelRoute& r = ev.route;
    int maxLen = rt.rtm_family == AF_INET ? 32 : 128;
    if (rt.rtm_dst_len > maxLen) return std::nullopt;
    auto dst = address(attrs, RTA_DST);
    if (dst && dst->family() != rt.rtm_family) return std::nullopt;
    std::array<uint8_t, 16> zero{};
    r.dst.addr =
        dst.value_or(rt.rtm_family == AF_INET ? IpAddr::v4(zero.data()) : IpAddr::v6(zero.data()));
    r.dst.length = rt.rtm_dst_len;
    r.table = scalar<uint32_t>(attrs, RTA_TABLE).value_or(rt.rtm_table);
    r.protocol = rt.rtm_protocol;
    r.type = rt.rtm_type;
    r.metric = scalar<uint32_t>(attrs, RTA_PRIORITY).value_or(0);
    r.nhid = scalar<uint32_t>(attrs, RTA_NH_ID).value_or(0);
    if (r.nhid == 0) inlineNexthops(attrs, rt, r);
    return ev;
}

std::optional<std::vector<WeightedNexthop>> resolveNexthops(uint32_t nhid,
                                                            const NexthopObjects& objects) {
    auto it = objects.find(nhid);
    if (it == objects.end()) return std::nullopt;
    std::vector<WeightedNexthop> out;
    if (it->second.group.empty()) out.push_back(it->second.single);
    for (const auto& [member, weight] : it->second.group) {
        auto m = objects.find(member);
        if (m == objects.end()) return std::nullopt;
        WeightedNexthop w = m->second.single;
        w.weight = weight;
        out.push_back(w);
    }
    return out;
}

RouteWatch::RouteWatch(boost::asio::io_context& io, std::set<uint32_t> tables, OnChange onChange)
    : io_(io),
      tables_(std::move(tables)),
      onChange_(std::move(onChange)),
      buffer_(size_t{64} * 1024),
      retryTimer_(io) {}

RouteWatch::~RouteWatch() {
    try {
        stop();
    } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw
    }
}

namespace {

int netlinkSocket(bool subscribe) {
    int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) throw std::runtime_error(std::string("route watch socket: ") + strerror(errno));
    if (subscribe) {
        // Without CAP_NET_ADMIN (pathqd) this stays at net.core.rmem_max: a burst larger
        // than that is an overflow, and a snapshot.
        int size = kReceiveBuffer;
        if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) < 0)
            ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    }
    sockaddr_nl sa{};
    sa.nl_family = AF_NETLINK;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0) {
        int err = errno;
        ::close(fd);
        throw std::runtime_error(std::string("route watch bind: ") + strerror(err));
    }
    if (subscribe) {
        for (int group : {RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE, RTNLGRP_NEXTHOP})
            ::setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof group);
    }
    return fd;
}

}  // namespace

void RouteWatch::open() {
    eventsFd_ = netlinkSocket(true);
    events_ = std::make_unique<boost::asio::posix::stream_descriptor>(io_, eventsFd_);
    dumpsFd_ = netlinkSocket(false);
    dumps_ = std::make_unique<boost::asio::posix::stream_descriptor>(io_, dumpsFd_);
}

void RouteWatch::start() {
    open();
    beginSnapshot();
    armRead(*events_, eventsFd_, false);
    armRead(*dumps_, dumpsFd_, true);
}

void RouteWatch::stop() {
    retryTimer_.cancel();
    for (auto* d : {&events_, &dumps_}) {
        if (!*d) continue;
        (*d)->cancel();
        d->reset();  // closes its socket
    }
    eventsFd_ = dumpsFd_ = -1;
}

void RouteWatch::setTables(std::set<uint32_t> tables) {
    if (tables == tables_) return;
    tables_ = std::move(tables);
    resync();
}

void RouteWatch::resync() {
    if (stage_ >= 0) {
        resyncWanted_ = true;  // one dump at a time: after this one
        return;
    }
    beginSnapshot();
}

void RouteWatch::armRead(boost::asio::posix::stream_descriptor& d, int fd, bool dumps) {
    d.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                 [this, &d, fd, dumps](const boost::system::error_code& ec) {
                     if (ec) return;
                     drain(fd, dumps);
                     armRead(d, fd, dumps);
                 });
}

void RouteWatch::drain(int fd, bool dumps) {
    for (;;) {
        ssize_t n = ::recv(fd, buffer_.data(), buffer_.size() * sizeof(uint32_t), MSG_DONTWAIT);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == ENOBUFS) {
            ++stats_.overflows;
            queued_.clear();  // the next snapshot covers them
            resync();
            continue;
        }
        if (n <= 0) break;
        Bytes rest(reinterpret_cast<const uint8_t*>(buffer_.data()), static_cast<size_t>(n));
        while (rest.size() >= sizeof(nlmsghdr)) {
            nlmsghdr nh{};
            std::memcpy(&nh, rest.data(), sizeof nh);
            if (nh.nlmsg_len < sizeof(nlmsghdr) || nh.nlmsg_len > rest.size()) break;
            if (!dumps && stage_ >= 0) {
                ++stats_.queuedDuringDump;
                std::vector<uint32_t> copy((nh.nlmsg_len + 3) / 4);
                std::memcpy(copy.data(), rest.data(), nh.nlmsg_len);
                queued_.push_back(std::move(copy));
            } else {
                handle(reinterpret_cast<const nlmsghdr*>(rest.data()));
            }
            size_t step = NLMSG_ALIGN(nh.nlmsg_len);
            if (step >= rest.size()) break;
            rest = rest.subspan(step);
        }
    }
    notify();
}

void RouteWatch::notify() {
    if (changed_.empty() && !snapshotDone_) return;
    std::vector<RouteKey> changed(changed_.begin(), changed_.end());
    bool done = snapshotDone_;
    changed_.clear();
    snapshotDone_ = false;
    onChange_(changed, done);
}

void RouteWatch::handle(const nlmsghdr* msg) {
    ++stats_.messages;
    bool ours = stage_ >= 0 && msg->nlmsg_seq == seq_;
    if (ours && (msg->nlmsg_flags & NLM_F_DUMP_INTR) != 0) interrupted_ = true;
    switch (msg->nlmsg_type) {
        case NLMSG_DONE:
        case NLMSG_ERROR:  // nexthop objects unsupported (old kernel): nothing to dump
            if (ours) nextStage();
            return;
        case RTM_NEWROUTE:
        case RTM_DELROUTE:
            onRoute(msg);
            return;
        case RTM_NEWNEXTHOP:
        case RTM_DELNEXTHOP:
            onNexthop(msg, msg->nlmsg_type == RTM_DELNEXTHOP);
            return;
        default:
            return;
    }
}

void RouteWatch::onRoute(const nlmsghdr* msg) {
    auto ev = decodeRouteEvent(msg);
    if (!ev || tables_.count(ev->route.table) == 0) return;
    if (ev->removed) {
        erase(keyOf(ev->route));
    } else {
        store(std::move(ev->route));
    }
}

void RouteWatch::store(KernelRoute route) {
    RouteKey key = keyOf(route);
    notSeen_.erase(key);
    if (route.nhid != 0) {
        byNhid_[route.nhid].insert(key);
        auto nh = resolveNexthops(route.nhid, objects_);
        if (!nh) ++stats_.unresolved;  // kept without nexthops until the object arrives
        route.nexthops = nh.value_or(std::vector<WeightedNexthop>{});
    }
    auto it = routes_.find(key);
    if (it != routes_.end() && it->second == route) return;
    if (it != routes_.end() && it->second.nhid != 0 && it->second.nhid != route.nhid)
        byNhid_[it->second.nhid].erase(key);
    routes_[key] = std::move(route);
    changed_.insert(key);
}

void RouteWatch::erase(const RouteKey& key) {
    notSeen_.erase(key);
    auto it = routes_.find(key);
    if (it == routes_.end()) return;
    if (it->second.nhid != 0) byNhid_[it->second.nhid].erase(key);
    routes_.erase(it);
    changed_.insert(key);
}

void RouteWatch::onNexthop(const nlmsghdr* msg, bool removed) {
    // decodeNexthop reads RTM_NEWNEXTHOP only; a deletion carries the same body.
    std::vector<uint8_t> bytes(reinterpret_cast<const uint8_t*>(msg),
                               reinterpret_cast<const uint8_t*>(msg) + msg->nlmsg_len);
    reinterpret_cast<nlmsghdr*>(bytes.data())->nlmsg_type = RTM_NEWNEXTHOP;
    auto nh = decodeNexthop(reinterpret_cast<const nlmsghdr*>(bytes.data()));
    if (!nh) return;
    uint32_t id = nh->id;
    objectsNotSeen_.erase(id);
    if (removed) {
        objects_.erase(id);
    } else {
        objects_[id] = std::move(*nh);
    }
    reresolve(id);
}

void RouteWatch::reresolve(uint32_t id) {
    std::set<uint32_t> affected{id};
    for (const auto& [gid, obj] : objects_) {
        for (const auto& [member, weight] : obj.group)
            if (member == id) affected.insert(gid);
    }
    for (uint32_t a : affected) {
        auto it = byNhid_.find(a);
        if (it == byNhid_.end()) continue;
        for (const RouteKey& key : it->second) {
            auto r = routes_.find(key);
            if (r == routes_.end()) continue;
            auto nh = resolveNexthops(a, objects_).value_or(std::vector<WeightedNexthop>{});
            if (nh == r->second.nexthops) continue;
            r->second.nexthops = std::move(nh);
            changed_.insert(key);
        }
    }
}

void RouteWatch::beginSnapshot() {
    ++stats_.snapshots;
    interrupted_ = false;
    resyncWanted_ = false;
    notSeen_.clear();
    for (const auto& [key, r] : routes_) notSeen_.insert(key);
    objectsNotSeen_.clear();
    for (const auto& [id, obj] : objects_) objectsNotSeen_.insert(id);
    stage_ = -1;
    nextStage();
}

void RouteWatch::nextStage() {
    ++stage_;
    if (stage_ > 2) {
        endSnapshot();
        return;
    }
    struct {
        nlmsghdr nh;
        rtmsg body;  // nhmsg is smaller and laid out the same way for the family
    } req{};
    req.nh.nlmsg_len = NLMSG_LENGTH(stage_ == 0 ? sizeof(nhmsg) : sizeof(rtmsg));
    req.nh.nlmsg_type = stage_ == 0 ? RTM_GETNEXTHOP : RTM_GETROUTE;
    req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    req.nh.nlmsg_seq = ++seq_;
    req.body.rtm_family = stage_ == 0 ? AF_UNSPEC : (stage_ == 1 ? AF_INET : AF_INET6);
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (::sendto(dumpsFd_, &req, req.nh.nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel),
                 sizeof kernel) < 0) {
        // The socket buffer is full of events: try the whole snapshot again later.
        stage_ = -1;
        resyncWanted_ = true;
        retryTimer_.expires_after(std::chrono::milliseconds(100));
        retryTimer_.async_wait([this](const boost::system::error_code& ec) {
            if (!ec && stage_ < 0 && resyncWanted_) beginSnapshot();
        });
    }
}

void RouteWatch::endSnapshot() {
    stage_ = -1;
    if (resyncWanted_) {  // events were lost meanwhile
        beginSnapshot();
        return;
    }
    if (interrupted_) {
        ++stats_.dumpsInterrupted;
        // An interrupted dump may have left out routes that still exist: repeat it, and
        // when the table keeps changing under it, keep the view unswept (stale entries
        // linger; none is lost) and take another snapshot a second later.
        if (++interruptedInRow_ < kMaxInterruptedRetries) {
            beginSnapshot();
            return;
        }
        interruptedInRow_ = 0;
        retryTimer_.expires_after(std::chrono::seconds(1));
        retryTimer_.async_wait([this](const boost::system::error_code& ec) {
            if (!ec) resync();
        });
        synced_ = true;
        snapshotDone_ = true;
        replayQueued();
        return;
    }
    interruptedInRow_ = 0;
    for (const RouteKey& key : std::set<RouteKey>(notSeen_)) erase(key);
    for (uint32_t id : std::set<uint32_t>(objectsNotSeen_)) {
        objects_.erase(id);
        reresolve(id);
    }
    notSeen_.clear();
    objectsNotSeen_.clear();
    synced_ = true;
    snapshotDone_ = true;
    replayQueued();
}

void RouteWatch::replayQueued() {
    auto queued = std::move(queued_);
    queued_.clear();
    for (const auto& msg : queued) handle(reinterpret_cast<const nlmsghdr*>(msg.data()));
}

std::vector<const KernelRoute*> entriesOf(const RouteFeed::Routes& routes, uint32_t table,
                                          const IpPrefix& prefix) {
    std::vector<const KernelRoute*> out;
    for (auto it = routes.lower_bound(RouteKey{table, prefix, 0, 0});
         it != routes.end() && it->first.table == table && it->first.dst == prefix; ++it)
        out.push_back(&it->second);
    return out;
}

}  // namespace twinrail::netlink
