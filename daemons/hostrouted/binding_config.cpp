#include "binding_config.h"

#include "twinrail/common/names.h"

namespace twinrail::hostrouted {
namespace {

using nlohmann::json;
using service::ConfigError;
using service::FieldReader;

std::string where(const std::string& table, const std::string& key) {
    return table + "|" + names::printable(key);
}

// A host address as a table key: one unicast address that a host can hold (no prefix,
// not link-local: those are never routed, so a binding for one is a plan error).
std::optional<IpAddr> hostKey(const std::string& key, std::string& why) {
    auto ip = IpAddr::parse(key);
    if (!ip) {
        why = "is not an IPv4 or IPv6 address";
    } else if (ip->isLinkLocal() || ip->isMulticast() || ip->isUnspecified() || ip->isLoopback()) {
        why = "is not a host's unicast address";
        ip.reset();
    }
    return ip;
}

std::optional<ConfigError> checkName(FieldReader& r, const std::string& field,
                                     const std::string& value) {
    if (auto why = names::check(value, names::Kind::Interface)) {
        r.fail(field, "interface name \"" + names::printable(value) + "\" " + *why);
    }
    return r.error;
}

// Each row of a table keyed by host address: the key checked, the row an object, then
// `row` reads its fields (and returns the first error).
template <typename RowFn>
std::optional<ConfigError> forEachHostRow(const json& table, const std::string& name, RowFn row) {
    if (!table.is_object()) return ConfigError{name, "must be an object of keys"};
    for (auto it = table.begin(); it != table.end(); ++it) {
        const std::string at = where(name, it.key());
        std::string why;
        auto ip = hostKey(it.key(), why);
        if (!ip) return ConfigError{at, why};
        if (!it.value().is_object()) return ConfigError{at, "must be an object"};
        FieldReader r{it.value(), at, std::nullopt};
        if (auto err = row(*ip, r)) return err;
    }
    return std::nullopt;
}

}  // namespace

std::optional<ConfigError> parseBindings(const json& table, HostBindings& out) {
    return forEachHostRow(table, "HOSTROUTED_BINDING", [&out](const IpAddr& ip, FieldReader& r) {
        r.rejectUnknown({"ifname", "port"});
        HostBinding b;
        b.ifname = r.text("ifname").value_or("");
        b.port = r.text("port").value_or("");
        if (r.error) return r.error;
        if (b.ifname.empty())
            return std::optional(ConfigError{r.where + " field ifname", "missing"});
        if (auto err = checkName(r, "ifname", b.ifname)) return err;
        if (!b.port.empty())
            if (auto err = checkName(r, "port", b.port)) return err;
        out[ip] = b;
        return std::optional<ConfigError>{};
    });
}

std::optional<ConfigError> parseUnfreeze(const json& table, UnfreezeRequests& out) {
    return forEachHostRow(table, "HOSTROUTED_UNFREEZE", [&out](const IpAddr& ip, FieldReader& r) {
        r.rejectUnknown({"requested"});
        long long requested = -1;
        r.integer("requested", requested, 0, 1LL << 40);
        if (r.error) return r.error;
        if (requested < 0)
            return std::optional(ConfigError{r.where + " field requested", "missing"});
        out[ip] = requested;
        return std::optional<ConfigError>{};
    });
}

std::string_view bindingVerdictName(BindingVerdict v) {
    switch (v) {
        case BindingVerdict::Unbound:
            return "unbound";
        case BindingVerdict::Bound:
            return "bound";
        case BindingVerdict::BoundElsewhere:
            return "bound-elsewhere";
        case BindingVerdict::NotBoundHere:
            return "not-bound-here";
    }
    return "unknown";
}

void BindingIndex::reset(const HostBindings& bindings) {
    bindings_ = bindings;
    byIfname_.clear();
    for (const auto& [ip, b] : bindings_) byIfname_[b.ifname].push_back(ip);
}

const HostBinding* BindingIndex::find(const IpAddr& ip) const {
    auto it = bindings_.find(ip);
    return it == bindings_.end() ? nullptr : &it->second;
}

BindingVerdict BindingIndex::check(const IpAddr& ip, const std::string& ifname) const {
    if (const HostBinding* b = find(ip))
        return b->ifname == ifname ? BindingVerdict::Bound : BindingVerdict::BoundElsewhere;
    return hasBindings(ifname) ? BindingVerdict::NotBoundHere : BindingVerdict::Unbound;
}

std::vector<IpAddr> BindingIndex::boundTo(const std::string& ifname) const {
    auto it = byIfname_.find(ifname);
    return it == byIfname_.end() ? std::vector<IpAddr>{} : it->second;
}

}  // namespace twinrail::hostrouted
