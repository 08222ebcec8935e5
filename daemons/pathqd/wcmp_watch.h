// SONiC's own static W-ECMP: CONFIG_DB `BGP_DEVICE_GLOBAL|STATE` `wcmp_enabled true` makes
// bgpcfgd write `set extcommunity bandwidth num-multipaths` into its TO_BGP_PEER_V4/V6
// route-maps, so this switch then advertises a bandwidth of its own that competes with
// pathqd's. pathqd never touches bgpcfgd's route-maps (frr_policy.h names only its own);
// it warns at start and whenever the knob turns on, and shows it in PATHQD_STATS
// `sonic_wcmp`. Read every `period` (a timer; CONFIG_DB changes are rare).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "twinrail/redis/client.h"

namespace twinrail::pathqd {

inline constexpr const char* kWcmpKey = "BGP_DEVICE_GLOBAL|STATE";

// What a change of wcmp_enabled means for pathqd: a log line (warning when on), or none.
struct WcmpNotice {
    bool warning = false;
    std::string text;
};
std::optional<WcmpNotice> wcmpNotice(std::optional<bool> before, std::optional<bool> now);
// The field as bgpcfgd reads it ("true" is on; absent or anything else is off).
bool wcmpEnabled(const redis::Value& hgetall);

class WcmpWatch {
  public:
    WcmpWatch(boost::asio::io_context& io, redis::Connection& configDb,
              std::chrono::milliseconds period);
    void start();
    void stop();
    std::string state() const;  // on, off, unknown (not read yet)

  private:
    void readNow();
    void arm();

    redis::Connection& db_;
    std::chrono::milliseconds period_;
    boost::asio::steady_timer timer_;
    std::optional<bool> enabled_;
    std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace twinrail::pathqd
