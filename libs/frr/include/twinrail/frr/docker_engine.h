// The Docker Engine API over its unix socket, the two calls that reaching FRR in a SONiC
// switch's `bgp` container needs: run a command in a running container (what `docker exec
// bgp vtysh`, SONiC's own host vtysh, does), and hear when that container starts. HTTP/1.1
// with Boost.Beast on the caller's io_context; nothing blocks the loop, every call has a
// deadline, and nothing is called back after stop().
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace twinrail::frr::docker {

struct EngineOptions {
    std::string socket = "/var/run/docker.sock";
    std::chrono::milliseconds timeout{20000};     // one exec, from create to exit code
    size_t maxOutput = size_t{64} * 1024 * 1024;  // stdout + stderr; more is an error
    std::chrono::milliseconds reconnectMin{500};  // the event stream, after it drops
    std::chrono::milliseconds reconnectMax{5000};
};

struct ExecResult {
    int exitCode = -1;  // -1: it did not run to the end (error says why)
    std::string out;
    std::string err;
    std::string error;  // Docker's or the transport's, empty when it ran
    bool timedOut = false;
};

class Engine : public std::enable_shared_from_this<Engine> {
  public:
    using ExecDone = std::function<void(ExecResult)>;
    static std::shared_ptr<Engine> create(boost::asio::io_context& io, EngineOptions options);
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    // Runs argv in `container` (a name checkContainerName accepts) as its default user.
    void exec(const std::string& container, std::vector<std::string> argv, ExecDone done);
    // Calls onStart whenever `container` starts, and once after the event stream was lost
    // and is back (a start may have been missed). One watch per engine.
    void watchStarts(const std::string& container, std::function<void()> onStart);
    // Ends the watch (an exec in flight carries on).
    void unwatch();
    // Closes every connection; no callback runs after this.
    void stop();
    const std::string& socket() const { return options_.socket; }

  private:
    Engine(boost::asio::io_context& io, EngineOptions options);
    struct Watch;
    void connectWatch();
    void readWatch();
    void retryWatch();

    boost::asio::io_context& io_;
    EngineOptions options_;
    // Handlers hold a weak_ptr to this: expired (stop(), or destroyed) means do nothing.
    std::shared_ptr<bool> alive_;
    bool stopped_ = false;
    std::shared_ptr<Watch> watch_;
};

}  // namespace twinrail::frr::docker
