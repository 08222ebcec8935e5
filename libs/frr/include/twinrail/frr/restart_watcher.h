// Tells when an FRR daemon (re)starts, the moment it happens: every FRR daemon creates its
// vty socket (<daemon>.vty) in FRR's run directory at start-up, so an inotify watch on
// that directory sees zebra or bgpd come back after a crash, a watchfrr restart or
// `systemctl restart frr`. What FRR loses in a restart (configuration added at run time,
// and zebra's view of routes it installed before) can then be checked at once instead of
// at the next periodic audit.
//
// The directory may not exist yet (FRR not started): the watch is retried every few
// seconds, and re-armed if the directory is removed and created again.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <string>

#include "twinrail/frr/vtysh.h"

namespace twinrail::frr {

// /var/run/frr, or /var/run/frr/<pathspace> for an instance started with -N.
std::string runDirectory(const VtyshOptions& options);

class RestartWatcher {
  public:
    using Handler = std::function<void(const std::string& daemon)>;  // "zebra", "bgpd", ...
    RestartWatcher(boost::asio::io_context& io, std::string directory, Handler onStart);
    ~RestartWatcher();
    RestartWatcher(const RestartWatcher&) = delete;
    RestartWatcher& operator=(const RestartWatcher&) = delete;

    void start();  // never throws; failures are logged and retried
    void stop();

  private:
    void addWatch();
    void retryLater();
    void armRead();
    void onReadable();

    boost::asio::io_context& io_;
    std::string directory_;
    Handler onStart_;
    int fd_ = -1;
    int watch_ = -1;
    std::unique_ptr<boost::asio::posix::stream_descriptor> descriptor_;
    boost::asio::steady_timer retry_;
    bool loggedMissing_ = false;
};

}  // namespace twinrail::frr
