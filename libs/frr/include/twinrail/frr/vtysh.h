// vtysh as a configuration channel (never per-event work): read the running config and
// apply small batches, each call asynchronous and bounded by a timeout.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "twinrail/common/subprocess.h"
#include "twinrail/frr/running_config.h"

namespace twinrail::frr {

// vtysh runs every line of a -c argument as a command of its own, and zebra's vty socket
// ends a command at a NUL: a control character inside one command line is a second
// command (or a cut one) that nobody wrote. nullopt when `line` has none; else why not,
// e.g. "contains control character 0x0a at offset 12".
std::optional<std::string> checkCommandLine(std::string_view line);

struct VtyshOptions {
    std::string binary = "/usr/bin/vtysh";
    std::string pathspace;  // FRR -N name; empty for the default instance
};

class Vtysh {
  public:
    Vtysh(boost::asio::io_context& io, VtyshOptions options);
    // Refuses (exit code -1, err saying why, vtysh never started) any argument with a
    // control character in it (checkCommandLine).
    void run(std::vector<std::string> args, ProcessCallback done);
    void showRunning(std::function<void(bool ok, std::string text)> done);
    // One `show ...` command; ok is false (and text says why) when vtysh failed.
    void show(const std::string& command, std::function<void(bool ok, std::string text)> done);

  private:
    boost::asio::io_context& io_;
    VtyshOptions options_;
};

}  // namespace twinrail::frr
