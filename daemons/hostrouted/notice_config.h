// Fast notices from a leaf (proto/fnn_wire.md), read from the config_db.json shape:
//   HOSTROUTED_NOTICE|global  port: the UDP port (0 or absent: off); plane: this leaf's
//                             plane (1-15); key: the plane's fabric key (64 hex digits, a
//                             secret); source: this leaf's loopback, which notices are
//                             sent from and relayed notices come to; leaves: the other
//                             leaves' loopbacks of the plane, comma-separated
// With them, a host port's loss is told at once to the plane's other leaves (under the
// plane key) and to the servers on this leaf (each under its own receiver key), and a
// notice from another leaf is passed on to the servers on this one.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "twinrail/common/ip.h"
#include "twinrail/fnn/keys.h"
#include "twinrail/service/config_fields.h"

namespace twinrail::hostrouted {

struct NoticeConfig {
    uint16_t port = 0;  // 0: off
    uint8_t plane = 0;
    std::optional<fnn::Key> key;
    std::optional<IpAddr> source;
    std::set<IpAddr> leaves;
    bool enabled() const { return port != 0; }
    bool operator==(const NoticeConfig&) const = default;
};

std::optional<service::ConfigError> parseNoticeConfig(const nlohmann::json& table,
                                                      NoticeConfig& out);

}  // namespace twinrail::hostrouted
