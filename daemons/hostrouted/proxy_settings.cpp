#include "proxy_settings.h"

namespace twinrail::hostrouted {

std::optional<ProxySetting> proxyChange(const std::optional<ProxySetting>& written, bool managed,
                                        const ProxySetting& wanted) {
    if (!managed) {
        if (written && written->any()) return ProxySetting{};
        return std::nullopt;
    }
    if (written) return *written == wanted ? std::nullopt : std::optional(wanted);
    // Never written: proxying off is the kernel default, so there is nothing to undo.
    return wanted.any() ? std::optional(wanted) : std::nullopt;
}

}  // namespace twinrail::hostrouted
