#include "twinrail/common/command_runner.h"

namespace twinrail {

ProcessRunner::ProcessRunner(boost::asio::io_context& io, ProcessOptions options,
                             std::chrono::milliseconds timeout)
    : io_(io), options_(std::move(options)), timeout_(timeout) {}

void ProcessRunner::run(std::vector<std::string> argv,
                        std::function<void(int exitCode, std::string err)> done) {
    runProcess(io_, std::move(argv), timeout_, options_,
               [done = std::move(done)](const ProcessResult& r) {
                   std::string err = r.timedOut ? "timed out" : (r.err.empty() ? r.out : r.err);
                   while (!err.empty() && (err.back() == '\n' || err.back() == '\r'))
                       err.pop_back();
                   done(r.timedOut ? -1 : r.exitCode, std::move(err));
               });
}

}  // namespace twinrail
