#include "twinrail/common/sysctl.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace twinrail::sysctl {

std::string path(const std::string& name) {
    std::string p = "/proc/sys/" + name;
    for (size_t i = std::string("/proc/sys/").size(); i < p.size(); ++i)
        if (p[i] == '.') p[i] = '/';
    return p;
}

std::string write(const std::string& name, const std::string& value) {
    std::string p = path(name);
    std::ofstream f(p);
    if (f) f << value << std::flush;
    if (!f) return p + ": " + std::strerror(errno != 0 ? errno : EIO);
    return "";
}

std::optional<std::string> read(const std::string& name) {
    std::ifstream f(path(name));
    std::string v;
    if (!(f >> v)) return std::nullopt;
    return v;
}

}  // namespace twinrail::sysctl
