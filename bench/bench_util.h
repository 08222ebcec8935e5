// What the lab benchmarks share: CPU time of a process or of this thread, a percentile,
// and a main that takes its lab down again whatever happens.
#pragma once

#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "twinrail/lab/plan_lab.h"

namespace twinrail::bench {

// utime + stime of `pid`, in seconds.
inline double processCpuSeconds(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::istringstream rest(text.substr(text.rfind(')') + 2));
    std::string field;
    double utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
        if (i == 14) utime = std::stod(field);
        if (i == 15) stime = std::stod(field);
    }
    return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

inline double threadCpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

inline double percentile(std::vector<double> v, double p) {
    if (v.empty()) return -1;
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(std::lround(p * static_cast<double>(v.size() - 1)))];
}

// Runs `body`; on an exception, says so and removes the lab (exit 70).
template <typename Body>
int labMain(const char* tool, const char* lab, Body body) {
    try {
        return body();
    } catch (const std::exception& e) {
        std::cerr << tool << ": " << e.what() << "\n";
        twinrail::lab::PlanLab::down(lab);
        return 70;
    }
}

}  // namespace twinrail::bench
