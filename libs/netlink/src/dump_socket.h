// rtnetlink dumps without blocking, shared by the monitor, the route dumper and the policy
// writer's rule dump. Private to the library.
//
// A dump is a request sent on a non-blocking socket of its own; its replies are read on the
// io_context as the kernel produces them (the kernel fills the next part of a dump while
// the previous one is read), at most a few datagrams per wakeup so that a dump of a large
// table yields to the loop's other handlers. Nothing here waits, except wait(), which only
// start-up code (before the loop runs) calls.
#pragma once

#include <linux/netlink.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

namespace twinrail::netlink::detail {

// Netlink messages kept back to back, each 4-byte aligned as the kernel sends them.
class MessageLog {
  public:
    void append(const nlmsghdr* msg);
    void append(const MessageLog& other);
    void clear() { words_.clear(); }
    bool empty() const { return words_.empty(); }
    size_t bytes() const { return words_.size() * sizeof(uint32_t); }
    // f(nlmsghdr*) for each message, in order.
    template <typename F>
    void forEach(F&& f) {
        size_t at = 0;
        while (at < words_.size()) {
            auto* msg = reinterpret_cast<nlmsghdr*>(words_.data() + at);
            f(msg);
            at += NLMSG_ALIGN(msg->nlmsg_len) / sizeof(uint32_t);
        }
    }

  private:
    std::vector<uint32_t> words_;
};

// A dump request: header (its length, flags and sequence are set when sent) and body.
std::vector<uint8_t> dumpRequest(uint16_t type, const void* body, size_t length);

// One dump at a time on a non-blocking NETLINK_ROUTE socket of its own.
class DumpSocket {
  public:
    // Each message of the reply (not NLMSG_DONE/NLMSG_ERROR).
    using OnMessage = std::function<void(nlmsghdr* msg)>;
    // Once per dump: error 0, or an errno (the kernel's, or the socket's); interrupted when
    // a part carried NLM_F_DUMP_INTR (the table changed under the dump). It may start the
    // next dump.
    using OnDone = std::function<void(int error, bool interrupted)>;

    explicit DumpSocket(boost::asio::io_context& io);
    ~DumpSocket();
    DumpSocket(const DumpSocket&) = delete;
    DumpSocket& operator=(const DumpSocket&) = delete;

    // Opens the socket now rather than at the first start(); throws std::runtime_error.
    void open();
    // Sends `request`; 0, or the errno it could not be sent with (then nothing is called).
    // EBUSY while another dump runs.
    int start(std::vector<uint8_t> request, OnMessage onMessage, OnDone onDone);
    bool busy() const { return running_; }
    // Start-up only (the loop does not run yet): reads until no dump runs any more (an
    // OnDone may start the next one). False when the kernel stays silent for `timeout`.
    bool wait(std::chrono::milliseconds timeout);
    // Forgets the running dump: its callbacks are not called, its late replies dropped.
    void cancel();

  private:
    int openSocket();  // 0 or errno
    void arm();
    void read(size_t maxDatagrams);
    // Handles one datagram; false when the dump ended in it (OnDone was called).
    bool parse(size_t length);
    void finish(int error);

    boost::asio::io_context& io_;
    std::unique_ptr<boost::asio::posix::stream_descriptor> descriptor_;
    int fd_ = -1;
    std::vector<uint32_t> buffer_;
    uint32_t seq_ = 0;
    bool running_ = false;
    bool interrupted_ = false;
    bool armed_ = false;
    OnMessage onMessage_;
    OnDone onDone_;
    // Read handlers check it: a handler already queued may run after this is gone.
    std::shared_ptr<char> alive_ = std::make_shared<char>(0);
};

// One-shot dumps, one after another on a DumpSocket: each repeated while the kernel flags
// it interrupted (a few times; then answered with EINTR and what the last try read), its
// reply collected and answered on the io_context, never inside request().
class DumpQueue {
  public:
    using Answer = std::function<void(int error, MessageLog& reply)>;

    explicit DumpQueue(boost::asio::io_context& io) : io_(io), socket_(io) {}
    void request(std::vector<uint8_t> request, Answer answer);
    size_t pending() const { return queue_.size(); }

  private:
    struct Request {
        std::vector<uint8_t> bytes;
        Answer answer;
    };
    void next();
    void attempt();
    void answer(int error);

    boost::asio::io_context& io_;
    DumpSocket socket_;
    std::deque<Request> queue_;  // the front one runs
    bool running_ = false;
    int attempts_ = 0;
    MessageLog reply_;
    std::shared_ptr<char> alive_ = std::make_shared<char>(0);
};

}  // namespace twinrail::netlink::detail
