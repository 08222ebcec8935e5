#include "twinrail/frr/daemon_vty.h"

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "twinrail/common/names.h"
#include "twinrail/frr/vtysh.h"

namespace twinrail::frr {
namespace {
namespace asio = boost::asio;
constexpr size_t kChunk = size_t{64} * 1024;
constexpr size_t kMaxReply = size_t{64} * 1024 * 1024;  // a runaway answer is an error, not memory
}  // namespace

DaemonVty::DaemonVty(asio::io_context& io, std::string socketPath,
                     std::chrono::milliseconds timeout)
    : path_(std::move(socketPath)), timeout_(timeout), socket_(io), timer_(io) {}

DaemonVty::~DaemonVty() {
    boost::system::error_code ignored;
    socket_.close(ignored);
    try {
        timer_.cancel();
    } catch (...) {  // NOLINT(bugprone-empty-catch): nothing to do while being destroyed
    }
}

void DaemonVty::command(std::string text, Done done) {
    // A NUL ends a command on this socket and a newline starts another: never sent.
    if (auto why = checkCommandLine(text)) {
        auto what = "refused to send \"" + names::printable(text) + "\": " + *why;
        boost::asio::post(socket_.get_executor(),
                          [done = std::move(done), what = std::move(what)] { done(false, what); });
        return;
    }
    queue_.push_back(Request{std::move(text), std::move(done)});
    if (!busy_) startNext();
}

void DaemonVty::startNext() {
    if (queue_.empty()) return;
    busy_ = true;
    reply_.clear();
    const uint64_t gen = ++generation_;
    timer_.expires_after(timeout_);
    timer_.async_wait([this, gen](const boost::system::error_code& ec) {
        if (ec || gen != generation_) return;
        fail("no answer within " + std::to_string(timeout_.count()) + " ms");
    });
    if (connected_) return send();
    boost::system::error_code ignored;
    socket_.close(ignored);
    socket_.async_connect(asio::local::stream_protocol::endpoint(path_),
                          [this, gen](const boost::system::error_code& ec) {
                              if (ec == asio::error::operation_aborted || gen != generation_)
                                  return;
                              if (ec)
                                  return fail("cannot connect to " + path_ + ": " + ec.message());
                              connected_ = true;
                              send();
                          });
}

void DaemonVty::send() {
    const uint64_t gen = generation_;
    chunk_ = queue_.front().text;
    chunk_.push_back('\0');
    asio::async_write(socket_, asio::buffer(chunk_),
                      [this, gen](const boost::system::error_code& ec, size_t) {
                          if (ec == asio::error::operation_aborted || gen != generation_) return;
                          if (ec) return fail("cannot write to " + path_ + ": " + ec.message());
                          readMore();
                      });
}

void DaemonVty::readMore() {
    const uint64_t gen = generation_;
    chunk_.resize(kChunk);
    socket_.async_read_some(
        asio::buffer(chunk_), [this, gen](const boost::system::error_code& ec, size_t n) {
            if (ec == asio::error::operation_aborted || gen != generation_) return;
            if (ec) return fail("reading " + path_ + ": " + ec.message());
            reply_.append(chunk_.data(), n);
            if (reply_.size() > kMaxReply) return fail("answer larger than 64 MiB");
            // The end: three NULs, then the status byte.
            const size_t len = reply_.size();
            if (len >= 4 && reply_[len - 4] == '\0' && reply_[len - 3] == '\0' &&
                reply_[len - 2] == '\0') {
                const auto status = static_cast<unsigned char>(reply_[len - 1]);
                reply_.resize(len - 4);
                if (status != 0) {
                    return finish(false, "command \"" + queue_.front().text + "\" failed (status " +
                                             std::to_string(status) + "): " + reply_);
                }
                return finish(true, std::move(reply_));
            }
            readMore();
        });
}

void DaemonVty::fail(const std::string& why) {
    boost::system::error_code ignored;
    socket_.close(ignored);
    connected_ = false;
    finish(false, why);
}

void DaemonVty::finish(bool ok, std::string text) {
    ++generation_;
    timer_.cancel();
    busy_ = false;
    Request req = std::move(queue_.front());
    queue_.pop_front();
    req.done(ok, std::move(text));
    // The callback may have queued more, or destroyed nothing: the object outlives it.
    if (!busy_) startNext();
}

}  // namespace twinrail::frr
