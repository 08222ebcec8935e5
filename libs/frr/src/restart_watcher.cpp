#include "twinrail/frr/restart_watcher.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "twinrail/common/log.h"

namespace twinrail::frr {
namespace {
constexpr auto kRetry = std::chrono::seconds(5);
constexpr std::string_view kVtySuffix = ".vty";
}  // namespace

std::string runDirectory(const VtyshOptions& options) {
    std::string dir = "/var/run/frr";
    if (!options.pathspace.empty()) dir += "/" + options.pathspace;
    return dir;
}

RestartWatcher::RestartWatcher(boost::asio::io_context& io, std::string directory, Handler onStart)
    : io_(io), directory_(std::move(directory)), onStart_(std::move(onStart)), retry_(io) {}

RestartWatcher::~RestartWatcher() {
    stop();
}

void RestartWatcher::start() {
    fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd_ < 0) {
        log::warning("FRR: cannot watch for restarts (inotify: ", std::strerror(errno),
                     "); they are found by the periodic audit only");
        return;
    }
    descriptor_ = std::make_unique<boost::asio::posix::stream_descriptor>(io_, fd_);
    addWatch();
    armRead();
}

void RestartWatcher::stop() {
    retry_.cancel();
    if (descriptor_) {
        boost::system::error_code ignored;
        descriptor_->cancel(ignored);
        descriptor_.reset();  // closes fd_
        fd_ = -1;
    }
}

void RestartWatcher::addWatch() {
    watch_ = ::inotify_add_watch(fd_, directory_.c_str(),
                                 IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF);
    if (watch_ >= 0) {
        if (loggedMissing_) log::info("FRR: watching ", directory_, " for daemon restarts");
        loggedMissing_ = false;
        return;
    }
    if (!loggedMissing_) {
        log::warning("FRR: cannot watch ", directory_, " (", std::strerror(errno),
                     "); retrying every ", std::chrono::seconds(kRetry).count(), " s");
        loggedMissing_ = true;
    }
    retryLater();
}

void RestartWatcher::retryLater() {
    retry_.expires_after(kRetry);
    retry_.async_wait([this](const boost::system::error_code& ec) {
        if (!ec && descriptor_) addWatch();
    });
}

void RestartWatcher::armRead() {
    descriptor_->async_wait(boost::asio::posix::stream_descriptor::wait_read,
                            [this](const boost::system::error_code& ec) {
                                if (ec) return;
                                onReadable();
                            });
}

void RestartWatcher::onReadable() {
    alignas(inotify_event) std::array<char, 4096> buf{};
    bool lost = false;
    for (;;) {
        ssize_t n = ::read(fd_, buf.data(), buf.size());
        if (n <= 0) break;
        for (size_t off = 0; off + sizeof(inotify_event) <= static_cast<size_t>(n);) {
            const auto* ev = reinterpret_cast<const inotify_event*>(buf.data() + off);
            off += sizeof(inotify_event) + ev->len;
            if ((ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) != 0) lost = true;
            if (ev->len == 0 || (ev->mask & (IN_CREATE | IN_MOVED_TO)) == 0) continue;
            std::string name(ev->name);
            if (name.size() <= kVtySuffix.size() ||
                name.compare(name.size() - kVtySuffix.size(), kVtySuffix.size(), kVtySuffix) != 0)
                continue;
            std::string daemon = name.substr(0, name.size() - kVtySuffix.size());
            log::notice("FRR: ", daemon, " (re)started");
            onStart_(daemon);
        }
    }
    if (lost) {  // the directory went away: watch for it to come back
        if (watch_ >= 0) ::inotify_rm_watch(fd_, watch_);
        watch_ = -1;
        retryLater();
    }
    armRead();
}

}  // namespace twinrail::frr
