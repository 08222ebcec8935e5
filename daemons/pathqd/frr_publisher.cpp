#include "frr_publisher.h"

#include <cmath>

#include "twinrail/common/log.h"
#include "twinrail/common/names.h"

namespace twinrail::pathqd {
namespace {
constexpr size_t kMaxLinesPerCall = 120;

std::string formatMs(double ms) {
    return std::to_string(std::llround(ms));
}

std::optional<uint32_t> asnOf(const frr::RunningConfig& running) {
    auto header = running.bgpRouterHeader();  // "router bgp 65000"
    if (!header) return std::nullopt;
    try {
        return static_cast<uint32_t>(std::stoul(header->substr(11)));
    } catch (const std::exception&) {
        return std::nullopt;
    }
}
}  // namespace

FrrPublisher::FrrPublisher(boost::asio::io_context& io, frr::Channel& frr,
                           std::chrono::milliseconds retry)
    : frr_(frr), retryAfter_(retry), retry_(io) {}

void FrrPublisher::request(PolicyInput desired) {
    desired_ = std::move(desired);
    dirty_ = true;
    kick();
}

void FrrPublisher::audit() {
    if (inFlight_ || !desired_) return;
    running_.reset();
    dirty_ = true;
    kick();
}

void FrrPublisher::retryLater() {
    retry_.expires_after(retryAfter_);
    retry_.async_wait([this](const boost::system::error_code& ec) {
        if (!ec) kick();
    });
}

void FrrPublisher::readRunning() {
    inFlight_ = true;
    frr_.showRunning([this, alive = std::weak_ptr<int>(alive_)](bool ok, const std::string& text) {
        if (alive.expired()) return;
        inFlight_ = false;
        if (!ok) {
            if (state_ != "unreachable") log::error("FRR: cannot read the running config: ", text);
            state_ = "unreachable";
            return retryLater();
        }
        running_ = frr::RunningConfig::parse(text);
        kick();
    });
}

void FrrPublisher::kick() {
    if (inFlight_ || !dirty_ || !desired_) return;
    if (!running_) return readRunning();
    auto asn = asnOf(*running_);
    if (!asn) {
        if (state_ != "no-bgp")
            log::error("FRR: no `router bgp` instance; nothing to attach route-maps to");
        state_ = "no-bgp";
        running_.reset();
        return retryLater();
    }
    PolicyInput in = *desired_;
    dirty_ = false;
    in.asn = *asn;
    PolicyDiff diff = diffPolicy(*running_, in);
    for (const auto& [port, line] : diff.conflicts) {
        if (conflicts_[port] != line) {
            log::error("FRR: neighbor ", port, " already has '", line,
                       "'; pathqd leaves that port alone");
        }
    }
    conflicts_ = diff.conflicts;
    auto refused = dropUnsafeLines(diff);
    stats_.refusedLines += refused.size();
    if (refused != lastRefused_) {
        for (const auto& line : refused) {
            log::error("FRR: not sending a line with a control character: ",
                       names::printable(line, 200));
        }
        lastRefused_ = refused;
    }
    if (diff.add.empty() && diff.remove.empty()) {
        state_ = conflicts_.empty() ? "ok" : "conflict";
        return;
    }
    // A large diff (the first publish on a spine of many ports) goes in chunks: FRR takes
    // a few hundred ms per route-map entry here, and one call must finish within vtysh's
    // timeout, or it is retried from the start for ever. Soft refreshes wait for the last
    // chunk, so routes are re-advertised once, with the whole new policy.
    if (diff.remove.size() + diff.add.size() > kMaxLinesPerCall) {
        size_t room = kMaxLinesPerCall - std::min(diff.remove.size(), kMaxLinesPerCall);
        if (diff.remove.size() > kMaxLinesPerCall) diff.remove.resize(kMaxLinesPerCall);
        diff.add.resize(std::min(diff.add.size(), room));
        pendingRefresh_.insert(diff.refresh.begin(), diff.refresh.end());
        diff.refresh.clear();
        dirty_ = true;  // the rest after this chunk
    } else {
        diff.refresh.insert(pendingRefresh_.begin(), pendingRefresh_.end());
        pendingRefresh_.clear();
    }
    auto args = policyVtyshArgs(*running_, diff, in);
    // Only bgpd uses these route-maps and lists: sending them to zebra and staticd too
    // doubled the time of every call.
    args.insert(args.begin(), {"-d", "bgpd"});
    if (const std::string* bad = unsafeVtyshArg(args)) {
        // Sending the same batch again would fail the same way: wait for the next change.
        ++stats_.errors;
        state_ = "error";
        log::error("FRR: not running vtysh: an argument holds a control character: ",
                   names::printable(*bad, 200));
        return;
    }
    size_t lines = diff.add.size() + diff.remove.size();
    auto started = std::chrono::steady_clock::now();
    inFlight_ = true;
    std::weak_ptr<int> alive = alive_;
    frr_.run(args, [this, alive, lines, started](const ProcessResult& r) {
        if (alive.expired()) return;
        inFlight_ = false;
        stats_.lastBatchMs =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                .count();
        running_.reset();  // re-read: what FRR shows, not what we sent, is the truth
        if (r.exitCode != 0) {
            ++stats_.errors;
            state_ = "error";
            dirty_ = true;
            log::error("FRR: vtysh batch failed (exit ", r.exitCode,
                       r.timedOut ? ", timed out" : "", "): ", r.out.substr(0, 400),
                       r.err.substr(0, 400));
            return retryLater();
        }
        ++stats_.batches;
        stats_.linesSent += lines;
        state_ = dirty_ ? "publishing" : (conflicts_.empty() ? "ok" : "conflict");
        log::info("FRR: applied ", lines, " lines and refreshed in ", formatMs(stats_.lastBatchMs),
                  " ms");
        // Read the result now, so the next change does not wait for a second vtysh call.
        readRunning();
    });
}

}  // namespace twinrail::pathqd
