// One thread for pure work too heavy for the event loop (turning a whole Redis table into
// a view, say): jobs run in order on the worker, and each result is handed back on the
// io_context's thread. A result whose Worker is gone by then is dropped, so no callback
// outlives its owner. The job must touch nothing the loop touches: give it its own copy.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace twinrail {

class Worker {
  public:
    explicit Worker(boost::asio::io_context& io);
    ~Worker();  // waits for the running job; queued ones are dropped, their results too
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;
    Worker(Worker&&) = delete;
    Worker& operator=(Worker&&) = delete;

    // `job` on the worker, then `done(result, "")` on the io_context's thread, or
    // `done({}, what)` when the job threw.
    template <typename R>
    void run(std::function<R()> job, std::function<void(R, std::string)> done) {
        push([this, job = std::move(job), done = std::move(done)]() mutable {
            auto result = std::make_shared<R>();
            std::string error;
            try {
                *result = job();
            } catch (const std::exception& e) {
                error = e.what();
            }
            boost::asio::post(io_, [alive = std::weak_ptr<char>(alive_), done = std::move(done),
                                    result, error = std::move(error)]() mutable {
                if (alive.lock()) done(std::move(*result), std::move(error));
            });
        });
    }

  private:
    void push(std::function<void()> task);
    void loop();

    boost::asio::io_context& io_;
    std::shared_ptr<char> alive_ = std::make_shared<char>();
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::function<void()>> tasks_;
    bool stopping_ = false;
    std::thread thread_;  // last: it starts once the rest exists
};

}  // namespace twinrail
