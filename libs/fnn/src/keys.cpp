#include "twinrail/fnn/keys.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace twinrail::fnn {

namespace {

int hexValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace

std::optional<Key> parseKeyHex(std::string_view text) {
    if (text.size() != 2 * kKeyBytes) return std::nullopt;
    Key key{};
    for (size_t i = 0; i < kKeyBytes; ++i) {
        int hi = hexValue(text[2 * i]);
        int lo = hexValue(text[2 * i + 1]);
        if (hi < 0 || lo < 0) return std::nullopt;
        key[i] = static_cast<uint8_t>(hi << 4 | lo);
    }
    return key;
}

std::string keyHex(const Key& key) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * kKeyBytes);
    for (uint8_t b : key) {
        out.push_back(kDigits[b >> 4]);
        out.push_back(kDigits[b & 0xf]);
    }
    return out;
}

Key randomKey() {
    Key key{};
    size_t have = 0;
    while (have < key.size()) {
        ssize_t n = getrandom(key.data() + have, key.size() - have, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw std::runtime_error(std::string("getrandom: ") + std::strerror(errno));
        have += static_cast<size_t>(n);
    }
    return key;
}

Key receiverKey(const Key& planeKey, const IpAddr& receiver) {
    const std::string label = "twinrail-fnn receiver " + receiver.str();
    Key out{};
    unsigned int len = 0;
    if (HMAC(EVP_sha256(), planeKey.data(), static_cast<int>(planeKey.size()),
             reinterpret_cast<const unsigned char*>(label.data()), label.size(), out.data(),
             &len) == nullptr ||
        len != out.size())
        throw std::runtime_error("HMAC-SHA256 is not available");
    return out;
}

}  // namespace twinrail::fnn
