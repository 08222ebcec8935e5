#include "twinrail/frr/access.h"

#include <stdexcept>

namespace twinrail::frr {

std::optional<Access::Kind> parseAccessKind(const std::string& name) {
    if (name == "vtysh") return Access::Kind::Vtysh;
    if (name == "docker") return Access::Kind::Docker;
    return std::nullopt;
}

std::optional<std::string> checkAccess(const Access& access) {
    if (access.kind == Access::Kind::Vtysh) return std::nullopt;
    return checkDockerFrrOptions(access.docker);
}

std::unique_ptr<Channel> makeFrrChannel(boost::asio::io_context& io, const Access& access,
                                        std::chrono::milliseconds zebraTimeout) {
    if (auto why = checkAccess(access)) throw std::invalid_argument(*why);
    if (access.kind == Access::Kind::Docker) return makeDockerFrr(io, access.docker);
    return makeLocalFrr(io, access.vtysh, zebraTimeout);
}

}  // namespace twinrail::frr
