#include "tc_pins.h"

#include "twinrail/common/log.h"

namespace twinrail::planesteer {
namespace {
constexpr const char* kTc = "/usr/sbin/tc";
}  // namespace

TcPins::TcPins(CommandRunner& tc, OutputReader show, std::string bond,
               std::vector<std::string> ports)
    : tc_(tc), show_(std::move(show)), bond_(std::move(bond)), ports_(std::move(ports)) {}

TcPins::~TcPins() {
    alive_.reset();
}

// Every completion comes back through here: once this object is gone or stopped nothing
// runs, and nothing the continuation throws leaves the loop's callback.
std::function<void(int, std::string)> TcPins::completion(Then then) {
    running_ = true;
    std::weak_ptr<int> alive = alive_;
    return [this, alive, then = std::move(then)](int exitCode, const std::string& said) {
        if (alive.expired()) return;
        running_ = false;
        if (stopped_) return;
        try {
            then(exitCode, said);
        } catch (const std::exception& e) {
            recover(e.what());
        } catch (...) {
            recover("unknown exception");
        }
    };
}

void TcPins::run(std::vector<std::string> argv, Then then) {
    tc_.run(std::move(argv), completion(std::move(then)));
}

void TcPins::start() {
    if (started_) return;
    started_ = true;
    clearing_ = true;
    show_({kTc, "-j", "filter", "show", "dev", bond_, "egress"},
          completion([this](int exitCode, const std::string& out) { listed(exitCode, out); }));
}

void TcPins::listed(int exitCode, const std::string& json) {
    if (exitCode != 0) {
        // No bond yet (then it has no pins either), or tc is broken: pins will tell.
        log::warning(bond_, ": cannot list its tc filters for a previous run's pins: ", json);
    } else {
        for (int pref : tcPinPrefs(json)) leftovers_.push_back(pref);
    }
    clearNext();
}

void TcPins::clearNext() {
    if (leftovers_.empty()) {
        clearing_ = false;
        return pump();
    }
    int pref = leftovers_.front();
    leftovers_.pop_front();
    run({kTc, "filter", "del", "dev", bond_, "egress", "pref", std::to_string(pref)},
        [this, pref](int exitCode, const std::string& said) {
            if (exitCode == 0) {
                log::info(bond_, ": removed pins a previous run left (pref ", pref, ")");
            } else {
                ++errors_;
                log::warning(bond_, ": cannot remove pref ", pref, " a previous run left: ", said);
            }
            clearNext();
        });
}

void TcPins::poke() {
    waitForPoke_ = false;
    table_.retryFailed();
    pump();
}

void TcPins::verify() {
    if (!tableReady_ || table_.size() == 0) return;
    verifyWanted_ = true;
    pump();
}

void TcPins::stop() {
    stopped_ = true;
}

// The one place that starts a command: at most one is in flight, in this order.
void TcPins::pump() {
    if (running_ || stopped_ || !started_ || clearing_ || waitForPoke_) return;
    if (verifyWanted_) {
        verifyWanted_ = false;
        if (tableReady_) return checkTable();
    }
    if (!table_.hasWork()) return;
    if (!tableReady_) return setUp(0);
    runNext();
}

void TcPins::setUp(size_t step) {
    auto steps = tcTableSetup(kTc, bond_);
    if (step == steps.size()) {
        tableReady_ = true;
        setupFailureLogged_ = false;
        log::info(bond_, ": pin table ready");
        return pump();
    }
    run(steps[step], [this, step](int exitCode, const std::string& said) {
        // Step 0 clears the pref and fails when there is nothing to clear. A later step
        // failing leaves a half-made table: the next round starts again from step 0.
        if (step > 0 && exitCode != 0) {
            ++errors_;
            waitForPoke_ = true;
            if (!setupFailureLogged_) {
                log::warning(bond_, ": cannot make the pin table (retrying): ", said);
                setupFailureLogged_ = true;
            }
            return;
        }
        setUp(step + 1);
    });
}

void TcPins::runNext() {
    auto cmd = table_.next();
    if (!cmd) return;
    if (cmd->op == PinCommand::Op::Set) {
        log::notice(bond_, ": ", cmd->peer.str(), " pinned to ", ports_.at(cmd->port),
                    " (the other plane no longer answers for it)");
    } else {
        log::notice(bond_, ": ", cmd->peer.str(), " back on the bond's hash");
    }
    run(tcArgv(kTc, bond_, ports_, *cmd), [this, c = *cmd](int exitCode, const std::string& said) {
        if (exitCode == 0) {
            table_.done(true);
            return pump();
        }
        ++errors_;
        log::warning(bond_, ": tc for ", c.peer.str(), " failed (retried next round): ", said);
        failed(c);
    });
}

// A failed command may have done nothing, all (a timeout after the kernel applied it), or
// found the table gone: ask tc what is there rather than guess.
void TcPins::failed(const PinCommand& c) {
    run(tcGetArgv(kTc, bond_, c.handle), [this](int exitCode, const std::string&) {
        if (exitCode == 0) {
            table_.done(false, true);
            return pump();
        }
        table_.done(false, false);
        checkTable();
    });
}

void TcPins::checkTable() {
    run(tcGetArgv(kTc, bond_, std::nullopt), [this](int exitCode, const std::string&) {
        if (exitCode == 0) return pump();
        tableGone();
    });
}

void TcPins::tableGone() {
    log::warning(bond_, ": the pin table is gone; pinning again");
    tableReady_ = false;
    table_.reinstallAll();
    waitForPoke_ = true;  // the next decision round makes it again
}

// Something threw in a continuation: nothing is known for sure any more, so everything is
// made again from scratch at the next round (the table's first step removes the pref).
void TcPins::recover(const char* what) {
    ++errors_;
    log::error(bond_, ": tc pins: ", what, "; making the pin table again");
    clearing_ = false;
    leftovers_.clear();
    tableGone();
}

}  // namespace twinrail::planesteer
