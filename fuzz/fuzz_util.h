// Helpers shared by the fuzz targets: invariant checks that crash (so libFuzzer keeps the
// input), and rtnetlink framing.
#pragma once

#include <linux/netlink.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>

namespace twinrail::fuzz {

// An invariant the code under test promises. abort() makes libFuzzer save the input as a
// crash, the same as a sanitizer finding.
inline void check(bool ok, const char* what) {
    if (ok) return;
    std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
    std::abort();
}

// Walks `input` as the kernel frames a netlink datagram (NLMSG_OK / NLMSG_NEXT): each
// message's nlmsg_len is at least a header and at most what is left, never more than
// the kernel sent. Each message is handed over in a heap block of exactly nlmsg_len bytes,
// 4-aligned like a receive buffer, so AddressSanitizer catches any read past nlmsg_len,
// not only reads past the whole input.
template <typename Fn>
void forEachNetlinkMessage(std::span<const uint8_t> input, Fn&& fn) {
    while (input.size() >= sizeof(nlmsghdr)) {
        nlmsghdr nh{};
        std::memcpy(&nh, input.data(), sizeof nh);
        if (nh.nlmsg_len < sizeof(nlmsghdr) || nh.nlmsg_len > input.size()) return;
        // new[] of uint8_t is aligned for any fundamental type, so the nlmsghdr cast is fine.
        std::unique_ptr<uint8_t[]> copy(new uint8_t[nh.nlmsg_len]);
        std::memcpy(copy.get(), input.data(), nh.nlmsg_len);
        fn(reinterpret_cast<nlmsghdr*>(copy.get()));
        size_t step = NLMSG_ALIGN(nh.nlmsg_len);
        if (step >= input.size()) return;
        input = input.subspan(step);
    }
}

}  // namespace twinrail::fuzz
