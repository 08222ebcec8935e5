#include "lab_notices.h"

#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace twinrail::lab {

namespace {
std::string keysPath(const std::string& labDir) {
    return labDir + "/notice-keys.json";
}
}  // namespace

void writeLabNoticeKeys(const std::string& labDir, const plan::NoticeKeys& keys) {
    const std::string path = keysPath(labDir);
    // Made 0600 before the secret goes in.
    { std::ofstream(path).close(); }
    ::chmod(path.c_str(), 0600);
    std::ofstream(path) << plan::noticeKeysJson(keys).dump(1) << "\n";
}

void restrictToDaemons(const std::string& path) {
    group* g = ::getgrnam("nogroup");
    if (g == nullptr || ::chown(path.c_str(), 0, g->gr_gid) != 0)
        throw std::runtime_error(path + ": cannot give it to group nogroup");
    ::chmod(path.c_str(), 0640);
}

std::optional<plan::NoticeKeys> labNoticeKeys(const std::string& labDir) {
    const std::string path = keysPath(labDir);
    if (!std::filesystem::exists(path)) return std::nullopt;
    std::ifstream in(path);
    return plan::noticeKeysFromJson(nlohmann::json::parse(in, nullptr, false), path);
}

}  // namespace twinrail::lab
