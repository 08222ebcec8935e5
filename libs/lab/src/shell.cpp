#include "twinrail/lab/shell.h"

#include <unistd.h>

#include <stdexcept>
#include <thread>

#include "twinrail/common/subprocess.h"

namespace twinrail::lab {

ShellResult sh(const std::string& command, std::chrono::milliseconds timeout) {
    auto r = runProcessSync({"/bin/bash", "-c", command}, timeout);
    return ShellResult{r.exitCode, std::move(r.out), std::move(r.err)};
}

std::string shOk(const std::string& command, std::chrono::milliseconds timeout) {
    auto r = sh(command, timeout);
    if (r.rc != 0) {
        throw std::runtime_error("command failed (rc " + std::to_string(r.rc) + "): " + command +
                                 "\n" + r.err + r.out);
    }
    return r.out;
}

bool waitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout,
               std::chrono::milliseconds step) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        if (done()) return true;
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(step);
    }
}

std::string uniquePrefix(const std::string& base) {
    // Interface names are capped at 15 characters; keep the prefix short.
    static const char* kDigits = "0123456789abcdefghijklmnopqrstuvwxyz";
    std::string id;
    for (auto pid = static_cast<unsigned>(getpid()); pid > 0; pid /= 36) id += kDigits[pid % 36];
    return base + id;
}

}  // namespace twinrail::lab
