#include "state_rows.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace twinrail::pathqd {

std::string formatDouble(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

}  // namespace twinrail::pathqd
