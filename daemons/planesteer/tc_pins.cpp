#include "tc_pins.h"

#include <nlohmann/json.hpp>
#include <set>

#include "twinrail/common/log.h"
#include "twinrail/common/subprocess.h"

namespace twinrail::planesteer {
namespace {
constexpr const char* kTc = "/usr/sbin/tc";
constexpr auto kTimeout = std::chrono::seconds(5);

std::string said(const ProcessResult& r) {
    return r.err.empty() ? r.out : r.err;
}
}  // namespace

TcPins::TcPins(boost::asio::io_context& io, std::string bond, std::vector<std::string> ports)
    : io_(io), bond_(std::move(bond)), ports_(std::move(ports)) {}

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
                       kTimeout, {{Capability::NetAdmin}});
        log::info(bond_, ": removed pins a previous run left (pref ", pref, ")");
    }
    tableReady_ = false;  // made at the first pin: the bond's clsact may not be there yet
}

void TcPins::poke() {
    if (running_ || !table_.hasWork()) return;
    running_ = true;
    if (tableReady_) {
        runNext();
    } else {
        setUp(0);
    }
}

void TcPins::setUp(size_t step) {
    auto steps = tcTableSetup(kTc, bond_);
    if (step == steps.size()) {
        tableReady_ = true;
        setupFailureLogged_ = false;
        log::info(bond_, ": pin table ready");
        runNext();
        return;
    }
    runProcess(io_, steps[step], kTimeout, {{Capability::NetAdmin}},
               [this, step](const ProcessResult& r) {
                   // Step 0 clears the pref and fails when there is nothing to clear.
                   if (step > 0 && r.exitCode != 0) {
                       ++errors_;
                       running_ = false;  // the next decision round tries again
                       if (!setupFailureLogged_) {
                           log::warning(bond_, ": cannot make the pin table (retrying): ", said(r));
                           setupFailureLogged_ = true;
                       }
                       return;
                   }
                   setUp(step + 1);
               });
}

void TcPins::runNext() {
    auto cmd = table_.next();
    if (!cmd) {
        running_ = false;
        return;
    }
    if (cmd->op == PinCommand::Op::Set) {
        log::notice(bond_, ": ", cmd->peer.str(), " pinned to ", ports_.at(cmd->port),
                    " (the other plane no longer answers for it)");
    } else {
        log::notice(bond_, ": ", cmd->peer.str(), " back on the bond's hash");
    }
    runProcess(io_, tcArgv(kTc, bond_, ports_, *cmd), kTimeout, {{Capability::NetAdmin}},
               [this, peer = cmd->peer](const ProcessResult& r) {
                   table_.done(r.exitCode == 0);
                   if (r.exitCode == 0) return runNext();
                   ++errors_;
                   log::warning(bond_, ": tc for ", peer.str(), " failed: ", said(r));
                   checkTable();
               });
}

void TcPins::verify() {
    if (running_ || table_.size() == 0) return;
    running_ = true;
    checkTable();
}

// A failed command: if the table itself is gone (the bond's clsact was deleted and made
// again), every pin is gone with it and is made again; otherwise go on.
void TcPins::checkTable() {
    runProcess(io_, {kTc, "-j", "filter", "show", "dev", bond_, "egress"}, kTimeout,
               [this](const ProcessResult& r) {
                   if (r.exitCode == 0 && tcListsPinTable(r.out)) return runNext();
                   log::warning(bond_, ": the pin table is gone; pinning again");
                   tableReady_ = false;
                   table_.reinstallAll();
                   running_ = false;  // the next decision round makes it again
               });
}

}  // namespace twinrail::planesteer
