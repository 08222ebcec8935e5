#include "pin_table.h"

#include <nlohmann/json.hpp>

namespace twinrail::planesteer {
namespace {

std::string hex(unsigned v) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "%x", v);
    return buf;
}

std::vector<std::string> filterHead(const std::string& tc, const std::string& verb,
                                    const std::string& bond) {
    return {tc,         "filter", verb, "dev", bond, "egress", "pref", std::to_string(kTablePref),
            "protocol", "ip"};
}

}  // namespace

void PinTable::enqueue(const IpAddr& peer) {
    if (inQueue_.insert(peer).second) queue_.push_back(peer);
}

void PinTable::want(const IpAddr& peer, std::optional<size_t> port) {
    bool inFlight = inFlight_ && inFlight_->peer == peer;
    auto it = installed_.find(peer);
    std::optional<size_t> current;
    if (it != installed_.end()) current = it->second.port;
    auto w = wanted_.find(peer);
    if (!inFlight && port == current) {
        if (w != wanted_.end()) {  // a pending change undone before it ran
            wanted_.erase(w);
            ++counters_.coalesced;
        }
        return;
    }
    if (w != wanted_.end()) {
        if (w->second != port) ++counters_.coalesced;
        w->second = port;
    } else {
        wanted_.emplace(peer, port);
    }
    enqueue(peer);
}

std::optional<PinHandle> PinTable::allocate(const IpAddr& peer) {
    uint8_t bucket = peer.data()[3];
    auto& used = used_[bucket];
    uint16_t item = 1;
    for (uint16_t u : used) {  // ascending: the first gap
        if (u != item) break;
        ++item;
    }
    if (item > kMaxBucketItem) return std::nullopt;
    used.insert(item);
    return PinHandle{bucket, item};
}

std::optional<PinCommand> PinTable::next() {
    if (inFlight_) return std::nullopt;
    while (!queue_.empty()) {
        IpAddr peer = queue_.front();
        queue_.pop_front();
        inQueue_.erase(peer);
        auto w = wanted_.find(peer);
        if (w == wanted_.end()) continue;  // cancelled while queued
        std::optional<size_t> port = w->second;
        wanted_.erase(w);
        auto it = installed_.find(peer);
        if (!port) {
            if (it == installed_.end()) continue;
            inFlight_ = PinCommand{PinCommand::Op::Remove, peer, it->second.handle, 0};
        } else if (it != installed_.end()) {
            if (it->second.port == *port) continue;
            inFlight_ = PinCommand{PinCommand::Op::Set, peer, it->second.handle, *port};
        } else {
            auto handle = allocate(peer);
            if (!handle) {
                ++counters_.refused;
                continue;
            }
            inFlight_ = PinCommand{PinCommand::Op::Set, peer, *handle, *port};
        }
        return inFlight_;
    }
    return std::nullopt;
}

void PinTable::done(bool ok) {
    if (!inFlight_) return;
    PinCommand c = *inFlight_;
    inFlight_.reset();
    bool wasInstalled = installed_.count(c.peer) > 0;
    if (!ok) ++counters_.failed;
    if (c.op == PinCommand::Op::Remove) {
        // Failed or not, the node is not ours any more: "not found" is the usual reason,
        // and a table that is gone altogether is caught by the caller (reinstallAll).
        installed_.erase(c.peer);
        used_[c.handle.bucket].erase(c.handle.item);
    } else if (ok) {
        installed_[c.peer] = Pin{c.handle, c.port};
    } else if (!wasInstalled) {
        used_[c.handle.bucket].erase(c.handle.item);
    }
    // A wish that came while tc ran is still in wanted_ and queued: compare it again.
    if (auto w = wanted_.find(c.peer); w != wanted_.end()) {
        auto it = installed_.find(c.peer);
        std::optional<size_t> current;
        if (it != installed_.end()) current = it->second.port;
        if (w->second == current) {
            wanted_.erase(w);
            ++counters_.coalesced;
        }
    }
}

void PinTable::reinstallAll() {
    for (const auto& [peer, pin] : installed_) {
        if (wanted_.count(peer) == 0) wanted_.emplace(peer, pin.port);
        enqueue(peer);
    }
    installed_.clear();
    used_.clear();
}

std::optional<size_t> PinTable::pinnedPort(const IpAddr& peer) const {
    auto it = installed_.find(peer);
    if (it == installed_.end()) return std::nullopt;
    return it->second.port;
}

std::vector<std::string> tcArgv(const std::string& tc, const std::string& bond,
                                const std::vector<std::string>& portNames, const PinCommand& c) {
    std::string handle = "1:" + hex(c.handle.bucket) + ":" + hex(c.handle.item);
    if (c.op == PinCommand::Op::Remove) {
        auto argv = filterHead(tc, "del", bond);
        argv.insert(argv.end(), {"handle", handle, "u32"});
        return argv;
    }
    // replace: adds the node, or re-points an existing one at the other port in place.
    auto argv = filterHead(tc, "replace", bond);
    argv.insert(argv.end(), {"handle", handle, "u32", "ht", "1:" + hex(c.handle.bucket) + ":",
                             "match", "ip", "dst", c.peer.str() + "/32", "action", "mirred",
                             "egress", "redirect", "dev", portNames.at(c.port)});
    return argv;
}

std::vector<std::vector<std::string>> tcTableSetup(const std::string& tc, const std::string& bond) {
    auto del = std::vector<std::string>{tc,   "filter", "del",  "dev",
                                        bond, "egress", "pref", std::to_string(kTablePref)};
    auto table = filterHead(tc, "add", bond);
    table.insert(table.end(), {"handle", "1:", "u32", "divisor", "256"});
    // The last byte of the destination (offset 16 of the IPv4 header, mask 0xff) picks
    // the bucket; a packet no node in its bucket matches goes on to the next pref.
    // No handle and no "ht": u32's hash-table handles are shared by every u32 filter of
    // the qdisc, so "ht 800::" names the first pref's root (the lab bond's ARP filter at
    // pref 1, say), not this pref's. Left out, the node goes into pref 100's own root.
    auto root = filterHead(tc, "add", bond);
    root.insert(root.end(), {"u32", "match", "u32", "0", "0", "hashkey", "mask", "0x000000ff", "at",
                             "16", "link", "1:"});
    return {del, table, root};
}

bool tcListsPinTable(const std::string& json) {
    auto j = nlohmann::json::parse(json, nullptr, false);
    if (!j.is_array()) return false;
    for (const auto& f : j) {
        if (!f.is_object()) continue;
        auto pref = f.find("pref");
        auto o = f.find("options");
        if (pref == f.end() || !pref->is_number_integer() || *pref != kTablePref) continue;
        if (o == f.end() || !o->is_object()) continue;
        auto fh = o->find("fh");
        if (fh != o->end() && fh->is_string() && *fh == "1:") return true;
    }
    return false;
}

}  // namespace twinrail::planesteer
