// Length-checked views of rtnetlink attributes, shared by the decoders. Private to the
// library: nothing here reads past the bytes it is given.
#pragma once

#include <linux/netlink.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "twinrail/common/ip.h"

namespace twinrail::netlink::detail {

using Bytes = std::span<const uint8_t>;

// Attributes of a message as (type -> payload) with every length checked.
inline std::map<uint16_t, Bytes> attributes(Bytes area) {
    std::map<uint16_t, Bytes> out;
    while (area.size() >= sizeof(nlattr)) {
        nlattr a{};
        std::memcpy(&a, area.data(), sizeof a);
        if (a.nla_len < sizeof(nlattr) || a.nla_len > area.size()) break;
        out[a.nla_type & NLA_TYPE_MASK] = area.subspan(NLA_HDRLEN, a.nla_len - NLA_HDRLEN);
        size_t step = NLA_ALIGN(a.nla_len);
        if (step >= area.size()) break;
        area = area.subspan(step);
    }
    return out;
}

template <typename T>
std::optional<T> scalar(const std::map<uint16_t, Bytes>& attrs, uint16_t type) {
    auto it = attrs.find(type);
    if (it == attrs.end() || it->second.size() < sizeof(T)) return std::nullopt;
    T v;
    std::memcpy(&v, it->second.data(), sizeof v);
    return v;
}

inline std::string text(const std::map<uint16_t, Bytes>& attrs, uint16_t type) {
    auto it = attrs.find(type);
    if (it == attrs.end()) return {};
    const auto* p = reinterpret_cast<const char*>(it->second.data());
    return std::string(p, strnlen(p, it->second.size()));
}

inline std::optional<IpAddr> address(const std::map<uint16_t, Bytes>& attrs, uint16_t type) {
    auto it = attrs.find(type);
    if (it == attrs.end()) return std::nullopt;
    if (it->second.size() == 4) return IpAddr::v4(it->second.data());
    if (it->second.size() == 16) return IpAddr::v6(it->second.data());
    return std::nullopt;
}

// The fixed header of a reply of `type` and the attributes after it; nullopt when the
// message is of another type or too short for the header.
template <typename Header>
std::optional<std::pair<Header, Bytes>> body(const nlmsghdr* msg, uint16_t type) {
    if (msg->nlmsg_type != type || msg->nlmsg_len < NLMSG_LENGTH(sizeof(Header)))
        return std::nullopt;
    Bytes all(reinterpret_cast<const uint8_t*>(msg), msg->nlmsg_len);
    Header h{};
    std::memcpy(&h, all.data() + NLMSG_HDRLEN, sizeof h);
    size_t attrStart = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(Header));
    if (attrStart > all.size()) return std::nullopt;
    return std::pair{h, all.subspan(attrStart)};
}

// Queued messages (each with .offset and .length in one buffer) sent in runs of at most
// `limit` bytes (a message larger than that alone): send(first, last) per run.
template <typename Pending, typename Send>
void inChunks(const std::vector<Pending>& pending, size_t limit, Send send) {
    size_t first = 0;
    for (size_t i = 0; i < pending.size(); ++i) {
        size_t chunk = pending[i].offset + pending[i].length - pending[first].offset;
        if (chunk > limit && i > first) {
            send(first, i);
            first = i;
        }
    }
    if (first < pending.size()) send(first, pending.size());
}

}  // namespace twinrail::netlink::detail
