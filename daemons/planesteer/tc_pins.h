// Pins peers to a port of a bond on the bond's egress, ahead of the bond's own choice:
// one u32 hash table at pref kTablePref holding a node per pinned peer (`match ip dst
// <peer>/32 action mirred egress redirect dev <port>`, the same mechanism as the
// dual-send ARP filter); see pin_table.h for why one table and how wishes coalesce.
// Whatever is in [kFirstPref, kLastPref] at start is a previous run's (kill -9, or the
// one-filter-per-pin layout of older versions) and is removed before any pin is made.
//
// tc never blocks the loop: every command goes through the CommandRunner and calls back
// later. A bond's commands run one at a time, in order (start-up clearing, the table,
// then pins); wishes that come meanwhile coalesce per peer in the PinTable, and poke()
// (once per decision round) starts whatever is pending. A failed command is logged and
// never believed applied: tc is asked what is there (`tc filter get`) and the pin is
// taken to be exactly that; the wish runs again at the next round. A table that failed
// half-way is made again from scratch (its first step removes the pref).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pin_table.h"
#include "twinrail/common/command_runner.h"
#include "twinrail/common/ip.h"

namespace twinrail::planesteer {

// Runs argv (no shell) and calls `done` once, later, on the loop with its exit code and
// standard output (when it failed: what it said): `tc -j filter show` at start, to find
// a previous run's pins.
using OutputReader = std::function<void(std::vector<std::string> argv,
                                        std::function<void(int exitCode, std::string out)> done)>;

class TcPins {
  public:
    TcPins(CommandRunner& tc, OutputReader show, std::string bond, std::vector<std::string> ports);
    ~TcPins();
    TcPins(const TcPins&) = delete;
    TcPins& operator=(const TcPins&) = delete;

    // Lists and removes a previous run's pins; returns at once, pins wait behind it.
    void start();
    // The port `peer` should use, or nullopt for the bond's hash; applied at poke().
    void want(const IpAddr& peer, std::optional<size_t> port) { table_.want(peer, port); }
    // A decision round: failed wishes are queued again, and tc starts on what is pending
    // unless it is already running (it then goes on by itself).
    void poke();
    // Makes every pin again if the table is gone (the bond's clsact was deleted and made
    // again: nothing fails then, the pins are just not there). Once a minute is enough.
    void verify();
    void stop();  // nothing more runs; pins stay

    std::optional<size_t> pinnedPort(const IpAddr& peer) const { return table_.pinnedPort(peer); }
    size_t size() const { return table_.size(); }
    size_t queued() const { return table_.queued(); }
    const PinCounters& counters() const { return table_.counters(); }
    uint64_t errors() const { return errors_; }
    bool running() const { return running_; }        // a command is in flight
    bool tableReady() const { return tableReady_; }  // made, as far as we know

  private:
    using Then = std::function<void(int exitCode, const std::string& said)>;
    std::function<void(int, std::string)> completion(Then then);
    void run(std::vector<std::string> argv, Then then);
    void pump();
    void listed(int exitCode, const std::string& json);
    void clearNext();
    void setUp(size_t step);
    void runNext();
    void failed(const PinCommand& c);
    void checkTable();
    void tableGone();
    void recover(const char* what);

    CommandRunner& tc_;
    OutputReader show_;
    std::string bond_;
    std::vector<std::string> ports_;
    PinTable table_;
    bool started_ = false;
    bool clearing_ = false;      // a previous run's prefs are still being removed
    std::deque<int> leftovers_;  // those prefs
    bool tableReady_ = false;
    bool running_ = false;
    bool stopped_ = false;
    bool verifyWanted_ = false;
    bool waitForPoke_ = false;  // after a failure: the next round retries, not the callback
    bool setupFailureLogged_ = false;
    uint64_t errors_ = 0;
    // Completions check it: a runner may call back after this object is gone.
    std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace twinrail::planesteer
