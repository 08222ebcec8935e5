#include "pin_table.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <utility>

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
    failed_.erase(peer);  // a newer wish replaces a failed one
    bool inFlight = inFlight_ && inFlight_->peer == peer;
    auto it = installed_.find(peer);
    std::optional<size_t> current;
    bool uncertain = false;
    if (it != installed_.end()) {
        current = it->second.port;
        uncertain = it->second.uncertain;
    }
    auto w = wanted_.find(peer);
    if (!inFlight && !uncertain && port == current) {
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
            if (it->second.port == *port && !it->second.uncertain) continue;
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

void PinTable::done(bool ok, bool nodePresent) {
    if (!inFlight_) return;
    PinCommand c = *inFlight_;
    inFlight_.reset();
    auto it = installed_.find(c.peer);
    auto freeHandle = [this, &c] { used_[c.handle.bucket].erase(c.handle.item); };
    if (ok && c.op == PinCommand::Op::Remove) {
        if (it != installed_.end()) installed_.erase(it);
        freeHandle();
    } else if (ok) {
        installed_[c.peer] = Pin{c.handle, c.port};
    } else {
        ++counters_.failed;
        if (!nodePresent) {  // gone, whatever was asked
            if (it != installed_.end()) installed_.erase(it);
            freeHandle();
        } else if (it != installed_.end()) {
            // A failed Remove leaves the pin as it was; a failed re-point, either port.
            it->second.uncertain = it->second.uncertain || c.op == PinCommand::Op::Set;
        } else if (c.op == PinCommand::Op::Set) {
            installed_[c.peer] = Pin{c.handle, c.port, true};  // made, though tc failed
        }
        if (wanted_.count(c.peer) == 0) {
            std::optional<size_t> wish;
            if (c.op == PinCommand::Op::Set) wish = c.port;
            failed_[c.peer] = wish;
        }
    }
    // A wish that came while tc ran is still in wanted_ and queued: compare it again.
    if (auto w = wanted_.find(c.peer); w != wanted_.end()) {
        auto pin = installed_.find(c.peer);
        std::optional<size_t> current;
        bool uncertain = false;
        if (pin != installed_.end()) {
            current = pin->second.port;
            uncertain = pin->second.uncertain;
        }
        if (w->second == current && !uncertain) {
            wanted_.erase(w);
            ++counters_.coalesced;
        }
    }
}

void PinTable::retryFailed() {
    auto failed = std::exchange(failed_, {});
    for (const auto& [peer, port] : failed)
        if (wanted_.count(peer) == 0) want(peer, port);
}

void PinTable::reinstallAll() {
    if (inFlight_) {
        const PinCommand& c = *inFlight_;
        if (c.op == PinCommand::Op::Set && wanted_.count(c.peer) == 0) {
            wanted_.emplace(c.peer, c.port);
            enqueue(c.peer);
        }
        inFlight_.reset();
    }
    // Each pin as the peer should have it: its pending wish, else the one tc failed, else
    // what it had.
    for (const auto& [peer, pin] : installed_) {
        if (wanted_.count(peer) == 0) {
            auto f = failed_.find(peer);
            wanted_.emplace(peer, f != failed_.end() ? f->second : std::optional(pin.port));
        }
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

std::vector<std::string> tcGetArgv(const std::string& tc, const std::string& bond,
                                   std::optional<PinHandle> node) {
    std::string handle = "1:";
    if (node) handle += hex(node->bucket) + ":" + hex(node->item);
    auto argv = filterHead(tc, "get", bond);
    argv.insert(argv.end(), {"handle", handle, "u32"});
    return argv;
}

std::set<int> tcPinPrefs(const std::string& json) {
    std::set<int> prefs;
    auto j = nlohmann::json::parse(json, nullptr, false);
    if (!j.is_array()) return prefs;
    for (const auto& f : j) {
        if (!f.is_object()) continue;
        auto pref = f.find("pref");
        if (pref == f.end() || !pref->is_number_integer()) continue;
        auto v = pref->get<int64_t>();
        if (v >= kFirstPref && v <= kLastPref) prefs.insert(static_cast<int>(v));
    }
    return prefs;
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
