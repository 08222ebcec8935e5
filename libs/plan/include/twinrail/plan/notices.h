// Fast notices' provisioning (proto/fnn_wire.md): one fabric key per plane, given to that
// plane's leaves (HOSTROUTED_NOTICE), and to each bonded server only its NICs' receiver
// keys (planesteer's notice_keys) with the leaves it hears from (PLANESTEER_NOTICE). The
// keys are not part of the plan: they are secrets, kept in a file of their own (0600).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "twinrail/fnn/keys.h"
#include "twinrail/plan/plan.h"

namespace twinrail::plan {

inline constexpr uint16_t kDefaultNoticePort = 7430;

struct NoticeKeys {
    uint16_t port = kDefaultNoticePort;
    std::map<int, fnn::Key> byPlane;
};

// A fresh random key for every plane of the plan.
NoticeKeys freshNoticeKeys(const Plan& plan);
// {"port": N, "planes": {"1": "<64 hex>", ...}}; reading throws std::runtime_error naming the
// file and what is wrong (never a key's text).
nlohmann::json noticeKeysJson(const NoticeKeys& keys);
NoticeKeys noticeKeysFromJson(const nlohmann::json& j, const std::string& where);

// The leaf's HOSTROUTED_NOTICE table, or null when its plane has no key.
nlohmann::json leafNoticeTable(const Plan& plan, const Switch& leaf, const NoticeKeys& keys);
// planesteer's config (planesteerConfig) with the server's notice settings added.
void addPlanesteerNotices(nlohmann::json& config, const Plan& plan, const Server& server,
                          const NoticeKeys& keys);

}  // namespace twinrail::plan
