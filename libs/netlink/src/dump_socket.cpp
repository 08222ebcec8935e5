#include "dump_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace twinrail::netlink::detail {
namespace {

// Datagrams read per wakeup (a dump part is at most 32 KiB): a dump of a large table is
// read over several wakeups, other handlers running in between.
constexpr size_t kDatagramsPerWake = 16;
constexpr size_t kBufferWords = size_t{64} * 1024 / sizeof(uint32_t);
// The kernel adds the next part of a dump when half of this is free; more buys nothing.
constexpr int kReceiveBuffer = 1024 * 1024;
constexpr int kDumpAttempts = 5;  // an interrupted one-shot dump is repeated this often

}  // namespace

void MessageLog::append(const nlmsghdr* msg) {
    size_t at = words_.size();
    words_.resize(at + NLMSG_ALIGN(msg->nlmsg_len) / sizeof(uint32_t), 0);
    std::memcpy(words_.data() + at, msg, msg->nlmsg_len);
}

void MessageLog::append(const MessageLog& other) {
    words_.insert(words_.end(), other.words_.begin(), other.words_.end());
}

std::vector<uint8_t> dumpRequest(uint16_t type, const void* body, size_t length) {
    std::vector<uint8_t> bytes(NLMSG_SPACE(length), 0);
    nlmsghdr h{};
    h.nlmsg_type = type;
    std::memcpy(bytes.data(), &h, sizeof h);
    if (length != 0) std::memcpy(bytes.data() + NLMSG_HDRLEN, body, length);
    return bytes;
}

DumpSocket::DumpSocket(boost::asio::io_context& io) : io_(io), buffer_(kBufferWords) {}

DumpSocket::~DumpSocket() {
    alive_.reset();
    boost::system::error_code ignored;
    if (descriptor_) descriptor_->close(ignored);
}

void DumpSocket::open() {
    if (int err = openSocket(); err != 0)
        throw std::runtime_error(std::string("netlink dump socket: ") + strerror(err));
}

int DumpSocket::openSocket() {
    if (descriptor_) return 0;
    int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) return errno;
    int size = kReceiveBuffer;
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    sockaddr_nl local{};
    local.nl_family = AF_NETLINK;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) < 0) {
        int err = errno;
        ::close(fd);
        return err;
    }
    descriptor_ = std::make_unique<boost::asio::posix::stream_descriptor>(io_, fd);
    fd_ = fd;
    return 0;
}

int DumpSocket::start(std::vector<uint8_t> request, OnMessage onMessage, OnDone onDone) {
    if (running_) return EBUSY;
    if (int err = openSocket(); err != 0) return err;
    nlmsghdr h{};
    std::memcpy(&h, request.data(), sizeof h);
    h.nlmsg_len = static_cast<uint32_t>(request.size());
    h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    h.nlmsg_seq = ++seq_;
    std::memcpy(request.data(), &h, sizeof h);
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    // The kernel starts the dump inside sendto() and queues its first part; nothing waits.
    if (::sendto(fd_, request.data(), request.size(), 0, reinterpret_cast<sockaddr*>(&kernel),
                 sizeof kernel) < 0)
        return errno;
    running_ = true;
    interrupted_ = false;
    onMessage_ = std::move(onMessage);
    onDone_ = std::move(onDone);
    arm();
    return 0;
}

void DumpSocket::cancel() {
    running_ = false;
    onMessage_ = nullptr;
    onDone_ = nullptr;
    // The kernel would go on with the dump on this socket (and refuse the next one with
    // EBUSY): a new socket is opened for the next dump instead.
    alive_ = std::make_shared<char>(0);
    armed_ = false;
    boost::system::error_code ignored;
    if (descriptor_) descriptor_->close(ignored);
    descriptor_.reset();
    fd_ = -1;
}

void DumpSocket::arm() {
    if (armed_ || !descriptor_) return;
    armed_ = true;
    descriptor_->async_wait(
        boost::asio::posix::stream_descriptor::wait_read,
        [this, alive = std::weak_ptr<char>(alive_)](const boost::system::error_code& ec) {
            if (alive.expired()) return;
            armed_ = false;
            if (ec) return;
            read(kDatagramsPerWake);
            if (alive.expired()) return;  // an OnDone destroyed us
            if (running_) arm();
        });
}

bool DumpSocket::wait(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (running_) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return false;
        pollfd p{fd_, POLLIN, 0};
        int rc = ::poll(&p, 1, static_cast<int>(left.count()));
        if (rc < 0 && errno == EINTR) continue;
        if (rc <= 0) return false;
        read(SIZE_MAX);
    }
    return true;
}

void DumpSocket::read(size_t maxDatagrams) {
    const size_t capacity = buffer_.size() * sizeof(uint32_t);
    for (size_t i = 0; i < maxDatagrams && fd_ >= 0; ++i) {
        ssize_t n = ::recv(fd_, buffer_.data(), capacity, MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n < 0 || static_cast<size_t>(n) > capacity) {
            // The reply is lost (or was cut): this socket's dump cannot be completed.
            int err = n < 0 ? errno : EMSGSIZE;
            bool wasRunning = running_;
            auto done = std::move(onDone_);
            cancel();
            if (wasRunning && done) done(err, false);
            return;
        }
        if (n == 0 || !running_) continue;  // nothing, or a late part of a forgotten dump
        if (!parse(static_cast<size_t>(n))) return;
    }
}

bool DumpSocket::parse(size_t length) {
    size_t at = 0;
    const auto* base = reinterpret_cast<const uint8_t*>(buffer_.data());
    while (length - at >= sizeof(nlmsghdr)) {
        nlmsghdr h{};
        std::memcpy(&h, base + at, sizeof h);
        if (h.nlmsg_len < sizeof(nlmsghdr) || h.nlmsg_len > length - at) break;
        // Parts are 4-byte aligned in the datagram, and so in the buffer.
        auto* msg = reinterpret_cast<nlmsghdr*>(buffer_.data() + at / sizeof(uint32_t));
        if (h.nlmsg_seq == seq_) {
            if ((h.nlmsg_flags & NLM_F_DUMP_INTR) != 0) interrupted_ = true;
            if (h.nlmsg_type == NLMSG_DONE || h.nlmsg_type == NLMSG_ERROR) {
                // Both carry an int: 0, or the dump's negative errno.
                int err = 0;
                if (h.nlmsg_len >= NLMSG_LENGTH(sizeof(int)))
                    std::memcpy(&err, base + at + NLMSG_HDRLEN, sizeof err);
                finish(err < 0 ? -err : 0);
                return false;
            }
            if (h.nlmsg_type >= NLMSG_MIN_TYPE) onMessage_(msg);
        }
        at += NLMSG_ALIGN(h.nlmsg_len);
    }
    return true;
}

void DumpSocket::finish(int error) {
    running_ = false;
    auto done = std::move(onDone_);
    onDone_ = nullptr;
    onMessage_ = nullptr;
    if (done) done(error, interrupted_);
}

void DumpQueue::request(std::vector<uint8_t> request, Answer answer) {
    queue_.push_back({std::move(request), std::move(answer)});
    if (!running_) next();
}

void DumpQueue::next() {
    running_ = true;
    attempts_ = 0;
    attempt();
}

void DumpQueue::attempt() {
    reply_.clear();
    ++attempts_;
    int rc = socket_.start(
        queue_.front().bytes, [this](nlmsghdr* msg) { reply_.append(msg); },
        [this](int error, bool interrupted) {
            if (error == 0 && interrupted) {
                if (attempts_ < kDumpAttempts) return attempt();  // read it again
                error = EINTR;
            }
            answer(error);
        });
    if (rc != 0) {
        // Answered later, on the loop, as every answer is.
        boost::asio::post(io_, [this, rc, alive = std::weak_ptr<char>(alive_)] {
            if (!alive.expired()) answer(rc);
        });
    }
}

void DumpQueue::answer(int error) {
    Request done = std::move(queue_.front());
    queue_.pop_front();
    MessageLog reply = std::move(reply_);
    reply_.clear();
    running_ = false;
    if (!queue_.empty()) next();
    // Last: the answer may destroy this queue.
    done.answer(error, reply);
}

}  // namespace twinrail::netlink::detail
