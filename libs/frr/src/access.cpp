#include "twinrail/frr/access.h"

#include <stdexcept>

namespace twinrail::frr {

std::optional<Access::Kind> parseAccessKind(const std::string& name) {
    if (name == "vtysh") return Access::Kind::Vtysh;
    if (name == "vty-tcp") return Access::Kind::VtyTcp;
    return std::nullopt;
}

std::optional<std::string> checkAccess(const Access& access) {
    if (access.kind == Access::Kind::Vtysh) return std::nullopt;
    return checkVtyTcpOptions(access.tcp);
}

std::unique_ptr<Channel> makeFrrChannel(boost::asio::io_context& io, const Access& access,
                                        std::chrono::milliseconds zebraTimeout) {
    if (auto why = checkAccess(access)) throw std::invalid_argument(*why);
    if (access.kind == Access::Kind::VtyTcp) return makeVtyTcpFrr(io, access.tcp);
    return makeLocalFrr(io, access.vtysh, zebraTimeout);
}

}  // namespace twinrail::frr
