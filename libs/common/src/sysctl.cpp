#include "twinrail/common/sysctl.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "twinrail/common/names.h"

namespace twinrail::sysctl {
namespace {

bool isInteger(std::string_view value) {
    if (!value.empty() && value.front() == '-') value.remove_prefix(1);
    if (value.empty() || value.size() > 20) return false;
    for (char c : value)
        if (c < '0' || c > '9') return false;
    return true;
}

}  // namespace

std::string_view sectionName(Section section) {
    switch (section) {
        case Section::Ipv4Conf:
            return "net.ipv4.conf";
        case Section::Ipv6Conf:
            return "net.ipv6.conf";
        case Section::Ipv4Neigh:
            return "net.ipv4.neigh";
        case Section::Ipv6Neigh:
            return "net.ipv6.neigh";
    }
    return "net.unknown";
}

std::string path(Section section, std::string_view ifname, std::string_view key,
                 std::string_view root) {
    // Only the section's own separators become '/'; the interface name is copied as is.
    std::string dir(sectionName(section));
    for (char& c : dir)
        if (c == '.') c = '/';
    std::string p(root);
    p += '/';
    p += dir;
    p += '/';
    p += ifname;
    p += '/';
    p += key;
    return p;
}

std::string displayName(Section section, std::string_view ifname, std::string_view key) {
    std::string name(sectionName(section));
    name += '.';
    name += names::printable(ifname, 32);
    name += '.';
    name += names::printable(key, 32);
    return name;
}

Writer::Writer(std::span<const Setting> allowed, std::string root)
    : allowed_(allowed), root_(std::move(root)) {}

std::optional<std::string> Writer::refusal(Section section, std::string_view ifname,
                                           std::string_view key) const {
    bool listed = false;
    for (const Setting& s : allowed_) listed = listed || (s.section == section && s.key == key);
    if (!listed) return "not a setting this daemon owns";
    if (auto why = names::check(ifname, names::Kind::Interface)) return "interface name " + *why;
    // Valid names, but they change every interface at once.
    if (ifname == "all" || ifname == "default") return "not a single interface";
    return std::nullopt;
}

std::string Writer::write(Section section, std::string_view ifname, std::string_view key,
                          std::string_view value) const {
    const std::string name = displayName(section, ifname, key);
    if (auto why = refusal(section, ifname, key)) return name + ": refused: " + *why;
    if (!isInteger(value)) return name + ": refused: the value is not an integer";
    // No O_CREAT: a port that went away is ENOENT, not a new file (in a test root);
    // O_TRUNC for the test root's plain files, which /proc/sys ignores.
    int fd = ::open(path(section, ifname, key, root_).c_str(),
                    O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return name + ": " + std::strerror(errno);
    ssize_t n = ::write(fd, value.data(), value.size());
    int error = n < 0 ? errno : (static_cast<size_t>(n) != value.size() ? EIO : 0);
    ::close(fd);
    return error == 0 ? "" : name + ": " + std::strerror(error);
}

std::optional<std::string> Writer::read(Section section, std::string_view ifname,
                                        std::string_view key) const {
    if (refusal(section, ifname, key)) return std::nullopt;
    int fd = ::open(path(section, ifname, key, root_).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return std::nullopt;
    char buf[128];
    ssize_t n = ::read(fd, buf, sizeof buf);
    ::close(fd);
    if (n <= 0) return std::nullopt;
    std::string_view text(buf, static_cast<size_t>(n));
    size_t start = text.find_first_not_of(" \t\n");
    if (start == std::string_view::npos) return std::nullopt;
    text.remove_prefix(start);
    return std::string(text.substr(0, text.find_first_of(" \t\n")));
}

}  // namespace twinrail::sysctl
