// twinrail::Worker: jobs run off the event loop, in order, results come back on the loop's
// thread, a job that throws says so, and results of a Worker that is gone are dropped.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "twinrail/common/worker.h"

using namespace std::chrono_literals;

namespace {

void runUntil(boost::asio::io_context& io, const std::function<bool()>& done) {
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (!done() && std::chrono::steady_clock::now() < until) {
        io.restart();
        io.run_for(5ms);
    }
}

}  // namespace

TEST(Worker, JobsRunOffTheLoopInOrderAndAnswerOnIt) {
    boost::asio::io_context io;
    twinrail::Worker worker(io);
    const auto loopThread = std::this_thread::get_id();
    std::atomic<bool> released{false};
    std::vector<int> answers;
    bool answeredOnLoop = true;
    // The first job waits for the loop to release it: it can only finish if the loop runs
    // meanwhile, which a job on the loop would prevent.
    worker.run<int>(
        [&released, loopThread] {
            EXPECT_NE(std::this_thread::get_id(), loopThread);
            while (!released) std::this_thread::sleep_for(1ms);
            return 1;
        },
        [&](int v, const std::string& error) {
            EXPECT_EQ(error, "");
            answeredOnLoop &= std::this_thread::get_id() == loopThread;
            answers.push_back(v);
        });
    worker.run<int>([] { return 2; },
                    [&](int v, const std::string&) {
                        answeredOnLoop &= std::this_thread::get_id() == loopThread;
                        answers.push_back(v);
                    });
    boost::asio::steady_timer release(io, 20ms);
    release.async_wait([&released](boost::system::error_code) { released = true; });
    runUntil(io, [&answers] { return answers.size() == 2; });
    EXPECT_EQ(answers, (std::vector<int>{1, 2}));
    EXPECT_TRUE(answeredOnLoop);
}

TEST(Worker, AJobThatThrowsSaysWhat) {
    boost::asio::io_context io;
    twinrail::Worker worker(io);
    std::optional<std::string> error;
    worker.run<int>([]() -> int { throw std::runtime_error("bad row"); },
                    [&error](int, std::string e) { error = std::move(e); });
    runUntil(io, [&error] { return error.has_value(); });
    EXPECT_EQ(error, "bad row");
}

TEST(Worker, ResultsOfAWorkerThatIsGoneAreDropped) {
    boost::asio::io_context io;
    bool called = false;
    {
        twinrail::Worker worker(io);
        std::atomic<bool> ran{false};
        worker.run<int>(
            [&ran] {
                ran = true;
                return 1;
            },
            [&called](int, const std::string&) { called = true; });
        while (!ran) std::this_thread::sleep_for(1ms);
        // Its answer is posted (or about to be) but the loop has not run it yet.
    }
    io.restart();
    io.run_for(50ms);
    EXPECT_FALSE(called);
}
