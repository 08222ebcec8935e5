// What the Docker Engine's socket sends back to the FRR channel (libs/frr docker_stream.h):
// an exec's multiplexed stdout/stderr, its JSON answers and the event stream's lines. The
// first byte picks how the rest is cut into pieces for the demultiplexer. Checks: no UB or
// crash on any bytes; the output never passes its bound; the same bytes give the same
// verdict however they are cut, and the same output when they are accepted.
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "twinrail/frr/docker_stream.h"

using twinrail::fuzz::check;
namespace docker = twinrail::frr::docker;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const size_t piece = 1 + data[0] % 16;
    const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
    constexpr size_t kBound = 512;
    docker::StreamDemux cut(kBound);
    for (size_t at = 0; at < input.size(); at += piece) cut.feed(input.substr(at, piece));
    cut.finish();
    docker::StreamDemux whole(kBound);
    whole.feed(input);
    whole.finish();
    check(cut.out().size() + cut.err().size() <= kBound, "output past its bound");
    check(cut.error().has_value() == whole.error().has_value(), "pieces change the verdict");
    if (!cut.error())
        check(cut.out() == whole.out() && cut.err() == whole.err(), "pieces change the output");
    std::string why;
    if (auto id = docker::execIdOf(input, why))
        check(!id->empty() && id->find('/') == std::string::npos, "an exec id unfit for a path");
    docker::execStateOf(input, why);
    docker::errorMessageOf(input);
    docker::isStartEvent(input, "bgp");
    docker::checkContainerName(input);
    return 0;
}
