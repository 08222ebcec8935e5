// Logging to stderr with the sd-daemon priority prefix ("<3>error") that journald
// understands, so a unit needs no syslog socket and priorities survive into the journal.
#pragma once

#include <sstream>
#include <string_view>

namespace twinrail::log {

enum class Priority : int { Error = 3, Warning = 4, Notice = 5, Info = 6, Debug = 7 };

void setMaxPriority(Priority max);  // messages less important than this are dropped
void setIdentity(std::string_view name);
void write(Priority p, std::string_view message);
bool enabled(Priority p);

template <typename... Parts>
void emit(Priority p, const Parts&... parts) {
    if (!enabled(p)) return;
    std::ostringstream out;
    (out << ... << parts);
    write(p, out.str());
}

template <typename... Parts>
void error(const Parts&... parts) { emit(Priority::Error, parts...); }
template <typename... Parts>
void warning(const Parts&... parts) { emit(Priority::Warning, parts...); }
template <typename... Parts>
void notice(const Parts&... parts) { emit(Priority::Notice, parts...); }
template <typename... Parts>
void info(const Parts&... parts) { emit(Priority::Info, parts...); }
template <typename... Parts>
void debug(const Parts&... parts) { emit(Priority::Debug, parts...); }

}  // namespace twinrail::log
