#include "twinrail/frr/vtysh.h"

#include <boost/asio/post.hpp>
#include <memory>

#include "twinrail/common/names.h"

namespace twinrail::frr {
namespace {
constexpr auto kTimeout = std::chrono::seconds(20);
}

std::optional<std::string> checkCommandLine(std::string_view line) {
    for (size_t i = 0; i < line.size(); ++i) {
        auto byte = static_cast<unsigned char>(line[i]);
        if (byte < 0x20 || byte == 0x7f) {
            static const char* kHex = "0123456789abcdef";
            return std::string("contains control character 0x") + kHex[byte >> 4] +
                   kHex[byte & 0xf] + " at offset " + std::to_string(i);
        }
    }
    return std::nullopt;
}

Vtysh::Vtysh(boost::asio::io_context& io, VtyshOptions options)
    : io_(io), options_(std::move(options)) {}

void Vtysh::run(std::vector<std::string> args, ProcessCallback done) {
    for (const auto& a : args) {
        if (auto why = checkCommandLine(a)) {
            ProcessResult refused;
            refused.err = "refused to run vtysh: \"" + names::printable(a) + "\" " + *why;
            // Asynchronous as a real run is: callers may hold locks or state across run().
            boost::asio::post(
                io_, [done = std::move(done), refused = std::move(refused)] { done(refused); });
            return;
        }
    }
    std::vector<std::string> argv{options_.binary};
    if (!options_.pathspace.empty()) argv.insert(argv.end(), {"-N", options_.pathspace});
    argv.insert(argv.end(), args.begin(), args.end());
    runProcess(io_, std::move(argv), kTimeout, std::move(done));
}

void Vtysh::showRunning(std::function<void(bool, std::string)> done) {
    run({"-c", "show running-config"}, [done = std::move(done)](ProcessResult r) {
        bool ok = r.exitCode == 0 && r.out.find("frr version") != std::string::npos;
        if (r.timedOut) return done(false, "no answer within 20 s (FRR busy or hung?)");
        done(ok, ok ? std::move(r.out) : (r.err.empty() ? r.out : r.err));
    });
}

void Vtysh::show(const std::string& command, std::function<void(bool, std::string)> done) {
    run({"-c", command}, [done = std::move(done)](ProcessResult r) {
        if (r.timedOut) return done(false, "no answer within 20 s (FRR busy or hung?)");
        if (r.exitCode != 0) return done(false, r.err.empty() ? r.out : r.err);
        done(true, std::move(r.out));
    });
}

}  // namespace twinrail::frr
