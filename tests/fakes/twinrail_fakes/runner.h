// A helper program (tc) as a fake: records every argv and answers with the exit code a
// test chose (0 by default), on the io_context as a real run does.
#pragma once

#include <boost/asio/post.hpp>
#include <functional>
#include <string>
#include <vector>

#include "twinrail/common/command_runner.h"

namespace twinrail::fakes {

class FakeRunner final : public CommandRunner {
  public:
    explicit FakeRunner(boost::asio::io_context& io) : io_(io) {}
    void run(std::vector<std::string> argv,
             std::function<void(int exitCode, std::string err)> done) override {
        int code = answer ? answer(argv) : 0;
        runs.push_back(std::move(argv));
        boost::asio::post(
            io_, [done = std::move(done), code] { done(code, code == 0 ? "" : "fake failure"); });
    }
    // The exit code for an argv; unset: 0.
    std::function<int(const std::vector<std::string>&)> answer;
    std::vector<std::vector<std::string>> runs;

  private:
    boost::asio::io_context& io_;
};

}  // namespace twinrail::fakes
