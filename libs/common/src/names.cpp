#include "twinrail/common/names.h"

#include <cstdio>

namespace twinrail::names {
namespace {

bool isAlnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool isGlob(char c) {
    return c == '*' || c == '?' || c == '[' || c == ']';
}

bool hasGlob(std::string_view name) {
    for (char c : name)
        if (isGlob(c)) return true;
    return false;
}

// IFNAMSIZ - 1 for a kernel name; a glob may be longer than what it matches.
size_t maxLength(std::string_view name, Kind kind) {
    if (kind == Kind::Interface) return 15;
    if (kind == Kind::InterfacePattern && !hasGlob(name)) return 15;
    return 63;
}

}  // namespace

std::string_view kindName(Kind kind) {
    switch (kind) {
        case Kind::Interface:
            return "interface name";
        case Kind::InterfacePattern:
            return "interface pattern";
        case Kind::Node:
            return "name";
        case Kind::RouteMap:
            return "route-map name";
    }
    return "name";
}

std::optional<std::string> check(std::string_view name, Kind kind) {
    if (name.empty()) return "is empty";
    const size_t max = maxLength(name, kind);
    if (name.size() > max) return "is longer than " + std::to_string(max) + " characters";
    for (size_t i = 0; i < name.size(); ++i) {
        char c = name[i];
        auto at = " at offset " + std::to_string(i);
        auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte == 0x7f) return "contains a control character" + at;
        if (byte >= 0x80) return "contains a non-ASCII byte" + at;
        if (c == ' ') return "contains a space" + at;
        bool ok = isAlnum(c) || c == '_' || c == '-' || c == '.' ||
                  (isGlob(c) && kind == Kind::InterfacePattern);
        if (!ok) return std::string("contains '") + c + "'" + at;
    }
    if (!isAlnum(name[0]) && !(kind == Kind::InterfacePattern && isGlob(name[0])))
        return "must start with a letter or digit";
    if (name.find("..") != std::string_view::npos) return "contains \"..\"";
    return std::nullopt;
}

std::string printable(std::string_view name, size_t max) {
    std::string out;
    for (size_t i = 0; i < name.size() && i < max; ++i) {
        auto byte = static_cast<unsigned char>(name[i]);
        if (byte < 0x20 || byte >= 0x7f || byte == '\\') {
            char buf[5];
            std::snprintf(buf, sizeof buf, "\\x%02x", byte);
            out += buf;
        } else {
            out += name[i];
        }
    }
    if (name.size() > max) out += "...";
    return out;
}

}  // namespace twinrail::names
