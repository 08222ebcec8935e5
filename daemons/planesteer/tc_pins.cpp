#include "tc_pins.h"

#include <nlohmann/json.hpp>
#include <set>

#include "twinrail/common/log.h"
#include "twinrail/common/subprocess.h"

namespace twinrail::planesteer {
namespace {
constexpr const char* kTc = "/usr/sbin/tc";
constexpr auto kTimeout = std::chrono::seconds(5);
}  // namespace

TcPins::TcPins(boost::asio::io_context& io, std::string bond) : io_(io), bond_(std::move(bond)) {}

void TcPins::clearLeftovers() {
    auto shown = runProcessSync({kTc, "-j", "filter", "show", "dev", bond_, "egress"}, kTimeout);
    auto j = nlohmann::json::parse(shown.out, nullptr, false);
    std::set<int> prefs;
    if (j.is_array()) {
        for (const auto& f : j) {
            if (f.is_object() && f.contains("pref") && f["pref"].is_number_integer())
                prefs.insert(f["pref"].get<int>());
        }
    }
    for (int pref : prefs) {
        if (pref < kFirstPref || pref > kLastPref) continue;
        runProcessSync({kTc, "filter", "del", "dev", bond_, "egress", "pref", std::to_string(pref)},
                       kTimeout);
        log::info(bond_, ": removed a pin a previous run left (pref ", pref, ")");
    }
}

void TcPins::pin(const IpAddr& peer, const std::string& port) {
    if (auto it = ports_.find(peer); it != ports_.end() && it->second == port) return;
    if (prefs_.count(peer) > 0) unpin(peer);
    // Prefs are handed out in turn and wrap; the range is far larger than any peer set.
    int pref = nextPref_;
    for (int tries = 0; tries <= kLastPref - kFirstPref; ++tries) {
        bool used = false;
        for (const auto& [ip, p] : prefs_) used = used || p == pref;
        if (!used) break;
        pref = pref == kLastPref ? kFirstPref : pref + 1;
    }
    nextPref_ = pref == kLastPref ? kFirstPref : pref + 1;
    prefs_[peer] = pref;
    ports_[peer] = port;
    log::notice(bond_, ": ", peer.str(), " pinned to ", port,
                " (the other plane no longer answers for it)");
    run({kTc,
         "filter",
         "add",
         "dev",
         bond_,
         "egress",
         "pref",
         std::to_string(pref),
         "protocol",
         "ip",
         "u32",
         "match",
         "ip",
         "dst",
         peer.str() + "/32",
         "action",
         "mirred",
         "egress",
         "redirect",
         "dev",
         port});
}

void TcPins::unpin(const IpAddr& peer) {
    auto it = prefs_.find(peer);
    if (it == prefs_.end()) return;
    log::notice(bond_, ": ", peer.str(), " back on the bond's hash");
    run({kTc, "filter", "del", "dev", bond_, "egress", "pref", std::to_string(it->second)});
    prefs_.erase(it);
    ports_.erase(peer);
}

void TcPins::run(std::vector<std::string> argv) {
    queue_.push_back(std::move(argv));
    next();
}

void TcPins::next() {
    if (running_ || queue_.empty()) return;
    running_ = true;
    auto argv = std::move(queue_.front());
    queue_.pop_front();
    runProcess(io_, argv, kTimeout, [this, cmd = argv[3]](const ProcessResult& r) {
        running_ = false;
        if (r.exitCode != 0) {
            ++errors_;
            log::warning(bond_, ": tc filter ", cmd, " failed: ", r.err.empty() ? r.out : r.err);
        }
        next();
    });
}

}  // namespace twinrail::planesteer
