#include "fast_notifier.h"

#include <algorithm>

#include "twinrail/common/log.h"

namespace twinrail::hostrouted {

namespace {

fnn::GuardSettings leafGuard(const NoticeConfig& c) {
    fnn::GuardSettings g;
    g.plane = c.plane;
    g.kind = fnn::KeyKind::Plane;
    if (c.key) g.keys = {{0, *c.key}};
    g.senders = c.leaves;
    return g;
}

IpPrefix hostPrefix(const IpAddr& ip) {
    return IpPrefix{ip, ip.maxPrefixLen()};
}

}  // namespace

void PortHosts::routed(const IpAddr& ip, int ifindex) {
    byPort_[ifindex][ip].reset();
}

void PortHosts::withdrawn(const IpAddr& ip, int ifindex, Time now) {
    auto port = byPort_.find(ifindex);
    if (port == byPort_.end()) return;
    auto host = port->second.find(ip);
    if (host != port->second.end()) host->second = now;
}

std::vector<IpAddr> PortHosts::lostWith(int ifindex, Time now, std::chrono::milliseconds window) {
    std::vector<IpAddr> out;
    auto port = byPort_.find(ifindex);
    if (port == byPort_.end()) return out;
    for (auto it = port->second.begin(); it != port->second.end();) {
        const auto& gone = it->second;
        if (gone && now - *gone > window) {
            it = port->second.erase(it);  // long gone: forgotten
            continue;
        }
        out.push_back(it->first);
        ++it;
    }
    return out;
}

FastNotifier::FastNotifier(NoticeConfig config, fnn::NoticeSocket& socket,
                           std::function<uint64_t()> wallNs)
    : cfg_(std::move(config)),
      socket_(socket),
      wallNs_(std::move(wallNs)),
      guard_(leafGuard(cfg_)) {}

// Strictly increasing, and above anything a previous run sent: it starts from the wall
// clock, so a restarted leaf is not taken for a replay.
uint64_t FastNotifier::nextSequence() {
    lastSequence_ = std::max(lastSequence_ + 1, wallNs_());
    return lastSequence_;
}

void FastNotifier::send(const fnn::Notice& n, const IpAddr& to, const fnn::Key& key) {
    auto bytes = fnn::encode(n, key);
    if (socket_.send(to, cfg_.port, bytes)) {
        ++counters_.sent;
    } else {
        ++counters_.sendFailed;
    }
}

void FastNotifier::tell(fnn::Event event, const std::vector<IpPrefix>& subjects,
                        const std::vector<IpAddr>& receivers, bool toLeaves) {
    // At most kMaxSubjects a notice: a port with more addresses takes several.
    for (size_t at = 0; at < subjects.size(); at += fnn::kMaxSubjects) {
        fnn::Notice n;
        n.event = event;
        n.plane = cfg_.plane;
        n.sender = *cfg_.source;
        n.sentNs = wallNs_();
        auto end =
            subjects.begin() + static_cast<long>(std::min(subjects.size(), at + fnn::kMaxSubjects));
        n.subjects.assign(subjects.begin() + static_cast<long>(at), end);
        if (toLeaves) {
            n.key = {fnn::KeyKind::Plane, 0};
            for (const auto& leaf : cfg_.leaves) {
                n.sequence = nextSequence();
                send(n, leaf, *cfg_.key);
            }
        }
        n.key = {fnn::KeyKind::Receiver, 0};
        for (const auto& server : receivers) {
            n.sequence = nextSequence();
            send(n, server, fnn::receiverKey(*cfg_.key, server));
        }
    }
}

void FastNotifier::portLost(const std::vector<IpAddr>& lost, const std::vector<IpAddr>& receivers) {
    if (lost.empty()) return;
    ++counters_.events;
    std::vector<IpPrefix> subjects;
    subjects.reserve(lost.size());
    for (const auto& ip : lost) subjects.push_back(hostPrefix(ip));
    tell(fnn::Event::HostPortDown, subjects, receivers, true);
}

void FastNotifier::received(const fnn::Datagram& d, const std::vector<IpAddr>& receivers,
                            fnn::MonoTime now) {
    auto v = guard_.admit(d.bytes, d.source, wallNs_(), now);
    const auto* n = std::get_if<fnn::Notice>(&v);
    if (n == nullptr) return;  // counted by the guard; the stats row shows it
    if (n->event != fnn::Event::HostPortDown && n->event != fnn::Event::LeafCutOff) return;
    ++counters_.relayed;
    log::info("fast notice ", fnn::describe(*n), ": passed on to ", receivers.size(), " server(s)");
    tell(n->event, n->subjects, receivers, false);
}

std::vector<std::pair<std::string, std::string>> noticeStatsFields(const NotifierCounters& c,
                                                                   const fnn::GuardCounters& g) {
    uint64_t refused = 0;
    for (auto n : g.refused) refused += n;
    return {{"notice_events", std::to_string(c.events)},
            {"notice_sent", std::to_string(c.sent)},
            {"notice_send_failed", std::to_string(c.sendFailed)},
            {"notice_relayed", std::to_string(c.relayed)},
            {"notice_accepted", std::to_string(g.accepted)},
            {"notice_refused", std::to_string(refused)}};
}

}  // namespace twinrail::hostrouted
