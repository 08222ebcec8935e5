// FRR as the daemons reach it: one channel for configuration (vtysh: show, apply) and for
// state read often (zebra's own vty socket), plus the news that an FRR daemon restarted.
// LocalFrr is FRR on this host (vtysh, /var/run/frr); unit tests put a fake behind the
// interface (tests/unit/fakes/fake_frr.h), and a SONiC implementation can slot in where
// FRR lives in the bgp container.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "twinrail/common/subprocess.h"
#include "twinrail/frr/running_config.h"
#include "twinrail/frr/vtysh.h"

namespace twinrail::frr {

class Channel {
  public:
    // ok is false when FRR could not be reached, timed out or refused; text then says why.
    using Done = std::function<void(bool ok, std::string text)>;
    using RestartHandler = std::function<void(const std::string& daemon)>;  // "zebra", "bgpd"

    virtual ~Channel() = default;

    // vtysh with these arguments ("-c", line, ...). A line with a control character in it
    // fails (asynchronously) without reaching FRR.
    virtual void run(std::vector<std::string> args, ProcessCallback done) = 0;
    // One `show ...` command through vtysh.
    virtual void show(const std::string& command, Done done) = 0;
    // `show running-config`; ok only when it is one.
    virtual void showRunning(Done done) = 0;
    // One command on zebra's own vty: no process per command, for state read several times
    // a second. Commands run one at a time, in order.
    virtual void zebra(std::string command, Done done) = 0;
    // zebra's vty socket when it is not in FRR's run directory (hostrouted's evpn_vty).
    // Before the first zebra() command.
    virtual void setZebraSocket(std::string path) = 0;
    // Calls `handler` whenever an FRR daemon (re)starts, from now until stopWatching().
    virtual void watchRestarts(RestartHandler handler) = 0;
    virtual void stopWatching() = 0;
    // Where commands go, for log lines.
    virtual std::string describe() const = 0;

    // Checks `required`, adds what is missing when `apply`, re-checks, and reports the
    // lines still missing (empty = all present) or an error text. Built on showRunning and
    // run, so every implementation gets the same logic.
    struct EnsureResult {
        bool reachable = false;
        std::vector<ConfigLine> missing;
        std::vector<ConfigLine> added;
        std::string error;
    };
    void ensure(const std::vector<ConfigLine>& required, bool apply,
                std::function<void(EnsureResult)> done);

  private:
    void applyNext(const std::shared_ptr<std::vector<ConfigLine>>& todo,
                   const RunningConfig& running, const std::shared_ptr<EnsureResult>& result,
                   const std::vector<ConfigLine>& required,
                   const std::function<void(EnsureResult)>& done);
};

// FRR on this host: vtysh (with the -N pathspace), zebra.vty and the restart watch in
// its run directory.
std::unique_ptr<Channel> makeLocalFrr(boost::asio::io_context& io, const VtyshOptions& options,
                                      std::chrono::milliseconds zebraTimeout);

}  // namespace twinrail::frr
