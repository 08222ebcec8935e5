// Linux counters are live: every read is what the kernel has now, so the instant the
// counters were taken is the read itself (on the worker, just before the dump).
#include <algorithm>
#include <boost/asio/post.hpp>

#include "counter_source.h"
#include "twinrail/netlink/link_stats.h"

namespace twinrail::pathqd {
namespace {
constexpr auto kSpeedRefresh = std::chrono::seconds(5);
}  // namespace

LinuxCounterSource::LinuxCounterSource(boost::asio::io_context& io)
    : io_(io), worker_([this] { work(); }) {}

LinuxCounterSource::~LinuxCounterSource() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_one();
    worker_.join();
}

void LinuxCounterSource::poll(const std::vector<std::string>& ports,
                              std::function<void(CounterMap, std::string)> done) {
    std::optional<Request> superseded;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (request_) superseded = std::move(request_);
        request_ = Request{ports, std::move(done)};
    }
    wake_.notify_one();
    if (superseded) {  // not what the daemon does; answered all the same
        boost::asio::post(
            io_, [done = std::move(superseded->done)] { done({}, "superseded by a newer read"); });
    }
}

void LinuxCounterSource::work() {
    for (;;) {
        Request req;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            wake_.wait(lock, [this] { return stopping_ || request_.has_value(); });
            if (stopping_) return;
            req = std::move(*request_);
            request_.reset();
        }
        CounterMap out;
        std::string error;
        try {
            out = read(req.ports);
        } catch (const std::exception& e) {
            error = e.what();
        }
        boost::asio::post(io_, [alive = std::weak_ptr<int>(alive_), done = std::move(req.done),
                                out = std::move(out), error = std::move(error)]() mutable {
            if (alive.lock()) done(std::move(out), std::move(error));
        });
    }
}

CounterMap LinuxCounterSource::read(const std::vector<std::string>& ports) {
    CounterMap out;
    std::map<int, netlink::QdiscStats> qdiscs;  // the root's
    std::map<int, uint64_t> marks;              // over every qdisc of the device that marks
    for (auto& q : netlink::dumpQdiscs()) {
        if (q.ecnMarks) marks[q.ifindex] += *q.ecnMarks;
        if (q.root) qdiscs[q.ifindex] = q;
    }
    auto now = std::chrono::steady_clock::now();
    for (const auto& link : netlink::dumpLinkCounters()) {
        if (std::find(ports.begin(), ports.end(), link.name) == ports.end()) continue;
        PortCounters& p = out[link.name];
        p.ifindex = link.ifindex;
        p.up = link.operUp;
        p.counters = {link.txBytes, link.txPackets, link.txDropped, 0, 0};
        if (auto m = marks.find(link.ifindex); m != marks.end()) {
            p.ecn = quality::MarkCounters{m->second, link.txPackets};
            p.ecnSource = "qdisc";
        }
        p.sampledAt = now;
        auto& speed = speeds_[link.name];
        if (speed.second + kSpeedRefresh < now || speed.second.time_since_epoch().count() == 0) {
            auto bps = netlink::linkSpeedBps(link.name);
            speed = {bps ? std::optional<double>(static_cast<double>(*bps)) : std::nullopt, now};
        }
        p.capacityBps = speed.first;
        if (auto q = qdiscs.find(link.ifindex); q != qdiscs.end()) {
            p.queueBytes = static_cast<double>(q->second.backlogBytes);
            p.queueSource = "qdisc";
            p.counters.drops += q->second.drops;
            if (q->second.rateBps) {
                double shaped = static_cast<double>(*q->second.rateBps);
                p.capacityBps = p.capacityBps ? std::min(*p.capacityBps, shaped) : shaped;
            }
        }
    }
    return out;
}

}  // namespace twinrail::pathqd
