#include "twinrail/common/log.h"

#include <unistd.h>

#include <atomic>
#include <string>

namespace twinrail::log {
namespace {
// Process-wide logging settings are set once in main before the loop starts.
std::atomic<int> g_max{static_cast<int>(Priority::Info)};  // NOLINT: logger config, not state
std::string& identity() {
    static std::string name;  // NOLINT: set once at start-up
    return name;
}
}  // namespace

void setMaxPriority(Priority max) { g_max = static_cast<int>(max); }
void setIdentity(std::string_view name) { identity() = std::string(name); }
bool enabled(Priority p) { return static_cast<int>(p) <= g_max.load(); }

void write(Priority p, std::string_view message) {
    std::string line = "<" + std::to_string(static_cast<int>(p)) + ">";
    if (!identity().empty()) line += identity() + ": ";
    line.append(message);
    line.push_back('\n');
    // One write() per line keeps lines whole when several processes share stderr.
    ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
    (void)ignored;
}

}  // namespace twinrail::log
