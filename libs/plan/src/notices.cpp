#include "twinrail/plan/notices.h"

#include <set>
#include <stdexcept>

#include "twinrail/plan/server_config.h"

namespace twinrail::plan {

namespace {

std::vector<const Switch*> leavesOf(const Plan& plan, int plane) {
    std::vector<const Switch*> out;
    for (const auto& sw : plan.switches)
        if (!sw.spine && sw.plane == plane) out.push_back(&sw);
    return out;
}

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
    return out;
}

}  // namespace

NoticeKeys freshNoticeKeys(const Plan& plan) {
    NoticeKeys keys;
    for (const auto& sw : plan.switches) {
        if (keys.byPlane.count(sw.plane) == 0) keys.byPlane[sw.plane] = fnn::randomKey();
    }
    return keys;
}

nlohmann::json noticeKeysJson(const NoticeKeys& keys) {
    nlohmann::json planes = nlohmann::json::object();
    for (const auto& [plane, key] : keys.byPlane) planes[std::to_string(plane)] = fnn::keyHex(key);
    return {{"port", keys.port}, {"planes", planes}};
}

NoticeKeys noticeKeysFromJson(const nlohmann::json& j, const std::string& where) {
    NoticeKeys keys;
    if (!j.is_object() || !j.contains("planes") || !j["planes"].is_object())
        throw std::runtime_error(where + ": not {\"port\": N, \"planes\": {...}}");
    if (j.contains("port")) {
        if (!j["port"].is_number_unsigned() || j["port"].get<uint64_t>() == 0 ||
            j["port"].get<uint64_t>() > 65535) {
            throw std::runtime_error(where + ": port is not 1-65535");
        }
        keys.port = j["port"].get<uint16_t>();
    }
    for (const auto& [plane, hex] : j["planes"].items()) {
        int n = plane.size() <= 2 && plane.find_first_not_of("0123456789") == std::string::npos &&
                        !plane.empty()
                    ? std::stoi(plane)
                    : 0;
        auto key = hex.is_string() ? fnn::parseKeyHex(hex.get<std::string>()) : std::nullopt;
        if (n < 1 || n > 15 || !key) {
            throw std::runtime_error(where + ": plane \"" + plane.substr(0, 8) +
                                     "\" is not a plane 1-15 with a key of 64 hex digits");
        }
        keys.byPlane[n] = *key;
    }
    return keys;
}

nlohmann::json leafNoticeTable(const Plan& plan, const Switch& leaf, const NoticeKeys& keys) {
    auto key = keys.byPlane.find(leaf.plane);
    if (leaf.spine || key == keys.byPlane.end()) return nullptr;
    std::vector<std::string> others;
    for (const auto* sw : leavesOf(plan, leaf.plane))
        if (sw->name != leaf.name) others.push_back(sw->loopback);
    nlohmann::json row = {{"port", std::to_string(keys.port)},
                          {"plane", std::to_string(leaf.plane)},
                          {"key", fnn::keyHex(key->second)},
                          {"source", leaf.loopback}};
    if (!others.empty()) row["leaves"] = joined(others);
    return {{"global", row}};
}

void addPlanesteerNotices(nlohmann::json& config, const Plan& plan, const Server& server,
                          const NoticeKeys& keys) {
    if (keys.byPlane.empty()) return;
    config["PLANESTEER"]["global"]["notice_port"] = std::to_string(keys.port);
    std::set<int> planes;
    for (const auto& nic : server.nics) {
        auto address = IpAddr::parse(nic.address);
        auto row = config["PLANESTEER_BOND"].find(bondName(nic));
        if (!address || row == config["PLANESTEER_BOND"].end()) continue;
        std::vector<std::string> planeOfPort, keyItems;
        for (const auto& port : nic.ports) {
            planeOfPort.push_back(std::to_string(port.plane));
            auto key = keys.byPlane.find(port.plane);
            if (key == keys.byPlane.end()) continue;
            keyItems.push_back(std::to_string(port.plane) + ":" +
                               fnn::keyHex(fnn::receiverKey(key->second, *address)));
            planes.insert(port.plane);
        }
        (*row)["planes"] = joined(planeOfPort);
        if (!keyItems.empty()) (*row)["notice_keys"] = joined(keyItems);
    }
    for (int plane : planes) {
        std::vector<std::string> senders;
        for (const auto* sw : leavesOf(plan, plane)) senders.push_back(sw->loopback);
        config["PLANESTEER_NOTICE"][std::to_string(plane)] = {{"senders", joined(senders)}};
    }
}

}  // namespace twinrail::plan
