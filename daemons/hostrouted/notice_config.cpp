#include "notice_config.h"

#include <sstream>

#include "twinrail/common/names.h"

namespace twinrail::hostrouted {

namespace {

std::optional<IpAddr> unicastV4(const std::string& text) {
    auto ip = IpAddr::parse(text);
    if (!ip || !ip->isV4() || ip->isUnspecified() || ip->isMulticast() || ip->isLimitedBroadcast())
        return std::nullopt;
    return ip;
}

std::optional<service::ConfigError> parseLeaves(service::FieldReader& r, NoticeConfig& out) {
    auto text = r.text("leaves");
    if (!text) return std::nullopt;
    std::stringstream in(*text);
    for (std::string item; std::getline(in, item, ',');) {
        auto ip = unicastV4(item);
        if (!ip) {
            return service::ConfigError{r.where + " field leaves", "\"" + names::printable(item) +
                                                                       "\" is not an IPv4 address"};
        }
        out.leaves.insert(*ip);
    }
    return std::nullopt;
}

}  // namespace

std::optional<service::ConfigError> parseNoticeConfig(const nlohmann::json& table,
                                                      NoticeConfig& out) {
    if (!table.is_object()) return service::ConfigError{"HOSTROUTED_NOTICE", "must be an object"};
    for (auto row = table.begin(); row != table.end(); ++row) {
        const std::string where = "HOSTROUTED_NOTICE|" + names::printable(row.key());
        if (row.key() != "global") return service::ConfigError{where, "unknown key; only 'global'"};
        if (!row.value().is_object()) return service::ConfigError{where, "must be an object"};
        service::FieldReader r{row.value(), where, std::nullopt};
        r.rejectUnknown({"port", "plane", "key", "source", "leaves"});
        r.integer("port", out.port, 0, 65535);
        r.integer("plane", out.plane, 1, 15);
        if (r.error) return *r.error;
        if (auto key = r.text("key")) {
            out.key = fnn::parseKeyHex(*key);
            // Never echoed: it is the plane's secret.
            if (!out.key) return service::ConfigError{where + " field key", "is not 64 hex digits"};
        }
        if (auto source = r.text("source")) {
            out.source = unicastV4(*source);
            if (!out.source) {
                return service::ConfigError{
                    where + " field source",
                    "\"" + names::printable(*source) + "\" is not an IPv4 address"};
            }
        }
        if (auto err = parseLeaves(r, out)) return err;
        if (r.error) return *r.error;
        if (out.port != 0 && (out.plane == 0 || !out.key || !out.source))
            return service::ConfigError{where, "port needs plane, key and source"};
    }
    return std::nullopt;
}

}  // namespace twinrail::hostrouted
