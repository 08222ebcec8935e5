// Wall-clock instants as STATE_DB shows them: ISO 8601, UTC, milliseconds.
#pragma once

#include <chrono>
#include <string>

namespace twinrail {

std::string isoTime(std::chrono::system_clock::time_point t);

}  // namespace twinrail
