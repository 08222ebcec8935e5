// Exit codes from sysexits(3); systemd and operators read 78 as "fix the config".
#pragma once

namespace twinrail::exitcode {
inline constexpr int kOk = 0;
inline constexpr int kUsage = 64;
inline constexpr int kDataErr = 65;  // the input is well-formed but impossible
inline constexpr int kNoInput = 66;
inline constexpr int kCantCreate = 73;
inline constexpr int kUnavailable = 69;
inline constexpr int kSoftware = 70;
inline constexpr int kOsErr = 71;
inline constexpr int kConfig = 78;
}  // namespace twinrail::exitcode
