// The lab's fast-notice keys (twinrail/plan/notices.h): made at `up` for a bond lab on the
// Linux layout, kept in the lab's directory (notice-keys.json, 0600), and read back when
// the switches' and the NICs' configs are written.
#pragma once

#include <optional>
#include <string>

#include "twinrail/plan/notices.h"

namespace twinrail::lab {

void writeLabNoticeKeys(const std::string& labDir, const plan::NoticeKeys& keys);
// A config file that holds a key: readable by root and the daemons' group (nogroup, as
// the lab runs them: lab_services.cpp), by nobody else.
void restrictToDaemons(const std::string& path);
// None when the lab has no keys (another attachment, the SONiC layout, an older lab).
std::optional<plan::NoticeKeys> labNoticeKeys(const std::string& labDir);

}  // namespace twinrail::lab
