// Bytes from an FRR daemon's vty TCP port (libs/frr vty_protocol.h), which on SONiC is a
// socket another container listens on: the telnet filter and the reply reader, fed the
// input in pieces cut where the first byte says. Checks: no UB or crash; the reader never
// keeps more than its bound; a finished command's output never holds its marker's echo; a
// finished command left a prompt.
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "twinrail/frr/vty_protocol.h"

using twinrail::fuzz::check;
namespace frr = twinrail::frr;
using Status = frr::VtyReplyReader::Status;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    const size_t chunk = 1 + data[0] % 64;  // how the bytes arrive
    const bool login = (data[1] & 1) != 0;
    std::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
    constexpr size_t kMax = 2048;
    frr::TelnetFilter telnet;
    frr::VtyReplyReader reader(kMax);
    const std::string marker = frr::vtyMarker(0x1234abcd5678ef90ULL);
    if (login) {
        reader.expectLogin();
    } else {
        reader.expectCommand("show version", marker);
    }
    Status status = Status::NeedMore;
    while (!rest.empty() && status == Status::NeedMore) {
        auto piece = rest.substr(0, chunk);
        rest.remove_prefix(piece.size());
        std::string text = telnet.filter(piece);
        check(text.find('\0') == std::string::npos, "a NUL byte passed the telnet filter");
        status = reader.feed(text);
        check(reader.received().size() <= kMax, "the reader kept more than its bound");
    }
    if (status == Status::Done) {
        check(!login, "a login step ended as a command");
        // The end is the marker's echo (with CRLF) as a line of its own, after the output.
        const std::string& all = reader.received();
        const auto echo = all.find("! " + marker + "\r\n");
        check(echo != std::string::npos, "done without the marker's echo");
        check(reader.output().size() <= echo, "output past the marker's echo");
        check(frr::isPrompt(reader.prompt()), "a command ended without a prompt");
    }
    if (status == Status::Prompt) check(frr::isPrompt(reader.prompt()) || login, "bad prompt");
    for (auto line : {std::string_view("show ip route"), rest})
        if (!frr::checkVtyLine(line)) check(line.size() <= frr::kMaxVtyLine, "a long line passed");
    return 0;
}
