// What tc must do to pin peers, coalesced: the desired port of each peer (or none: the
// bond's hash) is kept once per peer, so however often the policy changes its mind while
// tc is busy, the queue holds at most one entry per peer and only the latest wish runs.
// Pins live in ONE lookup structure, a u32 hash table of 256 buckets keyed on the last
// byte of the destination address, instead of a filter (and a pref) per peer: the kernel
// looks a packet up in one bucket (a few /32 matches) rather than walking every pin, and
// a pin is one node that `tc filter replace` re-points at the other port in place. u32 is
// there on every kernel planesteer runs on (KERNEL-FACTS.md); a BPF map would be one
// lookup too but needs a compiled object and a loader. Pure: tcArgv() builds the
// commands, TcPins runs them.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "twinrail/common/ip.h"

namespace twinrail::planesteer {

inline constexpr int kFirstPref = 100;   // the pin table's pref; older runs used 100-29999
inline constexpr int kLastPref = 29999;  // the lab's emulated bond hashes at 30000 and up
inline constexpr int kTablePref = kFirstPref;
inline constexpr uint16_t kMaxBucketItem = 0xfff;  // u32 node ids are 12 bits

struct PinHandle {
    uint8_t bucket = 0;  // the last byte of the peer's address
    uint16_t item = 0;   // 1..kMaxBucketItem within the bucket
    bool operator==(const PinHandle&) const = default;
};

struct PinCommand {
    enum class Op { Set, Remove } op;  // Set: add or re-point (`tc filter replace`)
    IpAddr peer;
    PinHandle handle;
    size_t port = 0;  // for Set
};

struct PinCounters {
    uint64_t coalesced = 0;  // wishes superseded or cancelled before tc ran them
    uint64_t refused = 0;    // a bucket had no free node id
    uint64_t failed = 0;     // tc said no
};

class PinTable {
  public:
    // The port `peer` should be pinned to, or nullopt for none. Never runs anything.
    void want(const IpAddr& peer, std::optional<size_t> port);
    // The next command, or nullopt when nothing is left or one is in flight.
    std::optional<PinCommand> next();
    // The in-flight command's result. Applied: the pin is what it asked. Failed: the pin
    // is what tc found at the command's node afterwards (`nodePresent`, from `tc filter
    // get`): gone, or there with its port uncertain (a timed-out tc may have applied it),
    // so that the next wish for the peer runs whatever it is. A failed wish is kept and
    // queued again by retryFailed(), not at once: tc that fails now fails a moment later.
    void done(bool ok, bool nodePresent = false);
    // The failed wishes nothing newer replaced, queued again (the next decision round).
    void retryFailed();
    // tc lost the table (its qdisc went): every pin must be made again. A command in
    // flight is abandoned: its wish stands (a Set is made again, a Remove is moot).
    void reinstallAll();

    std::optional<size_t> pinnedPort(const IpAddr& peer) const;
    size_t size() const { return installed_.size(); }
    size_t queued() const { return queue_.size(); }
    bool hasWork() const { return !queue_.empty(); }
    const PinCounters& counters() const { return counters_; }

  private:
    struct Pin {
        PinHandle handle;
        size_t port;
        bool uncertain = false;  // a failed command left the node; its port is not known
    };
    std::optional<PinHandle> allocate(const IpAddr& peer);
    void enqueue(const IpAddr& peer);

    std::map<IpAddr, Pin> installed_;
    std::map<IpAddr, std::optional<size_t>> wanted_;  // differs from installed_
    std::map<IpAddr, std::optional<size_t>> failed_;  // wishes tc failed, for retryFailed()
    std::deque<IpAddr> queue_;                        // each peer at most once
    std::set<IpAddr> inQueue_;
    std::map<uint8_t, std::set<uint16_t>> used_;
    std::optional<PinCommand> inFlight_;
    PinCounters counters_;
};

// The tc commands (argv, tc's path first).
std::vector<std::string> tcArgv(const std::string& tc, const std::string& bond,
                                const std::vector<std::string>& portNames, const PinCommand& c);
// Making the table: remove whatever is at its pref, add the table, then the root node that
// hashes every IPv4 packet into it.
std::vector<std::vector<std::string>> tcTableSetup(const std::string& tc, const std::string& bond);
// Whether `tc -j filter show dev B egress` lists the pin table.
bool tcListsPinTable(const std::string& json);
// The prefs in [kFirstPref, kLastPref] that `tc -j filter show dev B egress` lists: a
// previous run's pins, the table or one filter per pin (older versions).
std::set<int> tcPinPrefs(const std::string& json);
// Asks tc whether the table (no handle) or one pin's node is there: exit code 0 when it is.
std::vector<std::string> tcGetArgv(const std::string& tc, const std::string& bond,
                                   std::optional<PinHandle> node);

}  // namespace twinrail::planesteer
