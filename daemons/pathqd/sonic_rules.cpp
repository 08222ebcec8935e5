#include "sonic_rules.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace twinrail::pathqd::sonic {
namespace {

std::string trim(const std::string& s) {
    auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::optional<int> parseIndex(const std::string& s) {
    if (s.empty() || s.size() > 6) return std::nullopt;
    int v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + (c - '0');
    }
    return v;
}

}  // namespace

Hash toHash(const redis::Value& v) {
    Hash h;
    if (v.type != redis::Value::Type::Array || v.elements.size() % 2 != 0) return h;
    for (size_t i = 0; i + 1 < v.elements.size(); i += 2)
        h[v.elements[i].str] = v.elements[i + 1].str;
    return h;
}

std::optional<double> parseNumber(const std::string& s) {
    std::string t = trim(s);
    if (t.empty()) return std::nullopt;
    errno = 0;
    char* end = nullptr;
    double v = std::strtod(t.c_str(), &end);
    if (end != t.c_str() + t.size() || errno == ERANGE || !std::isfinite(v) || v < 0)
        return std::nullopt;
    return v;
}

std::optional<uint64_t> parseCounter(const redis::Value& v) {
    if (v.type == redis::Value::Type::Integer) {
        if (v.integer < 0) return std::nullopt;
        return static_cast<uint64_t>(v.integer);
    }
    if (v.type != redis::Value::Type::String) return std::nullopt;
    std::string t = trim(v.str);
    if (!t.empty() &&
        std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        errno = 0;
        uint64_t n = std::strtoull(t.c_str(), nullptr, 10);
        if (errno == ERANGE) return std::nullopt;
        return n;
    }
    auto d = parseNumber(t);
    if (!d || *d >= 18446744073709551615.0) return std::nullopt;
    return static_cast<uint64_t>(*d);
}

bool isPseudoPort(const std::string& name) {
    return name == "CPU" || name == "PortConfigDone" || name == "PortInitDone" || name.empty();
}

Speed portSpeed(const std::optional<std::string>& applOperStatus,
                const std::optional<std::string>& applSpeed,
                const std::optional<std::string>& stateSpeed) {
    auto usable = [](const std::optional<std::string>& s) -> std::optional<double> {
        if (!s) return std::nullopt;
        auto v = parseNumber(*s);
        if (!v || *v <= 0) return std::nullopt;
        return v;
    };
    bool operUp = applOperStatus && trim(*applOperStatus) == "up";
    if (auto st = usable(stateSpeed); st && operUp) return {st, "state_db"};
    if (auto ap = usable(applSpeed)) return {ap, "appl_db"};
    return {};
}

bool isUnicastQueue(const std::optional<std::string>& type) {
    if (!type) return true;
    return *type == "SAI_QUEUE_TYPE_UNICAST" || *type == "SAI_QUEUE_TYPE_ALL";
}

PortMaps buildMaps(const Hash& portNameMap, const Hash& queueNameMap, const Hash& queueTypeMap,
                   const Hash& queuePortMap) {
    PortMaps m;
    std::map<std::string, std::string> portByOid;
    for (const auto& [name, oid] : portNameMap) {
        if (oid.empty()) continue;
        m.portOid[name] = oid;
        portByOid[oid] = name;
    }
    for (const auto& [qname, qoid] : queueNameMap) {
        auto colon = qname.rfind(':');  // port names have no ':'; `Ethernet0:3`
        if (qoid.empty() || colon == std::string::npos || colon == 0) continue;
        std::string port = qname.substr(0, colon);
        if (auto pm = queuePortMap.find(qoid); pm != queuePortMap.end()) {
            auto owner = portByOid.find(pm->second);
            if (owner == portByOid.end()) continue;  // a queue of a port we do not know
            port = owner->second;
        }
        if (m.portOid.count(port) == 0) continue;
        auto type = queueTypeMap.find(qoid);
        if (!isUnicastQueue(type == queueTypeMap.end() ? std::nullopt
                                                       : std::optional<std::string>(type->second)))
            continue;
        m.queues[port].push_back({qoid, parseIndex(qname.substr(colon + 1)).value_or(-1)});
    }
    for (auto& [port, qs] : m.queues) {
        std::sort(qs.begin(), qs.end(), [](const QueueRef& a, const QueueRef& b) {
            return a.index != b.index ? a.index < b.index : a.oid < b.oid;
        });
    }
    return m;
}

const char* queueSourceName(QueueSource s) {
    switch (s) {
        case QueueSource::CurrOccupancy:
            return "curr_occupancy";
        case QueueSource::Watermark:
            return "watermark";
        case QueueSource::PeriodicWatermark:
            return "periodic_watermark";
        case QueueSource::None:
            break;
    }
    return "none";
}

std::optional<quality::MarkCounters> queueMarks(const std::vector<QueueReading>& queues) {
    std::optional<quality::MarkCounters> out;
    for (const auto& q : queues) {
        if (!q.ecnMarked || !q.packets) continue;
        if (!out) out.emplace();
        out->marked += *q.ecnMarked;
        out->packets += *q.packets;
    }
    return out;
}

QueueChoice chooseQueueSource(const std::vector<QueueReading>& queues) {
    QueueChoice c;
    auto take = [&queues, &c](QueueSource src, std::optional<double> QueueReading::*field) {
        for (const auto& q : queues) {
            if (!(q.*field)) continue;
            c.source = src;
            c.bytes += *(q.*field);
            ++c.queues;
        }
        return c.queues > 0;
    };
    if (take(QueueSource::CurrOccupancy, &QueueReading::currOccupancy)) return c;
    if (take(QueueSource::Watermark, &QueueReading::watermark)) return c;
    take(QueueSource::PeriodicWatermark, &QueueReading::periodicWatermark);
    return c;
}

}  // namespace twinrail::pathqd::sonic
