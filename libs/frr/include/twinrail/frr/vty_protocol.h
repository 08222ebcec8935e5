// FRR's vty over TCP (zebra 2601, bgpd 2605), as FRR 8.4 speaks it, with no I/O here:
// the byte-level rules that VtySession drives, unit-tested by feeding byte streams.
//
// What a daemon sends (verified against FRR 8.4.4):
//   banner "\r\nHello, this is FRRouting ...\r\n\r\nUser Access Verification\r\n\r\n",
//   telnet negotiation IAC WILL ECHO, IAC WILL SUPPRESS-GO-AHEAD, IAC DONT LINEMODE,
//   IAC DO NAWS, then "Password: ". A right password gives "\r\n<host>> ", a wrong one
//   "\r\nPassword: " again (three strikes close the connection); a daemon with no vty
//   password says "Vty password is not set." and closes. `enable` gives "<host># " or,
//   with an enable password, "Password: ". FRR echoes every command it reads, then its
//   output, then the prompt ("<host>(config-router)# " in config nodes).
//
// How a reply's end is found without being fooled by the output: each command goes out
// followed by a comment line carrying a random marker ("! twinrail-<16 hex>"). FRR ignores
// a comment but echoes it after the command's output and prompt, then prints the prompt
// again. A reply is complete when the marker's echo is followed by a prompt; output text
// cannot end a reply early unless it contains a marker it cannot know.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace twinrail::frr {

// Removes telnet commands (IAC verb option, IAC SB ... IAC SE, two-byte IAC commands) from
// a byte stream cut anywhere, keeps IAC IAC as one 0xff byte, and drops NUL bytes. FRR
// works without answers to its negotiation, so none are sent.
class TelnetFilter {
  public:
    std::string filter(std::string_view bytes);

  private:
    enum class State : uint8_t { Data, Iac, Option, Sub, SubIac };
    State state_ = State::Data;
};

// FRR's vty reads a line byte by byte: '?' asks for help and cuts the line, TAB completes,
// control characters edit, bytes >= 0x7f are dropped, and a line is cut at 4095 bytes.
// nullopt when `line` reaches FRR intact; else why not (offset included).
std::optional<std::string> checkVtyLine(std::string_view line);
constexpr size_t kMaxVtyLine = 4000;

// The prompt of a vty: "<host>> ", "<host># " or "<host>(<node>)# ". Host names hold no
// spaces, so a prompt is one word ending in "> " or "# ".
bool isPrompt(std::string_view line);
bool isConfigPrompt(std::string_view prompt);  // "<host>(config...)# "

// The error FRR printed for a command, or nullopt. In a config node every line that starts
// with '%' is an error (FRR prints nothing for a config line it accepts). In exec nodes only
// the parser's refusals are: vtysh exits 0 on warnings such as "% BGP instance not found"
// or "% BGP: Unknown neighbor", and this channel keeps that contract.
std::optional<std::string> vtyError(std::string_view output, bool inConfig);

// Reads one answer out of the filtered byte stream. Login steps end at a prompt or at
// "Password: " found at the end of what arrived; a command (sent with its marker) ends
// when the marker's echo is followed by a prompt. Bounded: more than `maxBytes` without an
// end is an error, and nothing is kept past it.
class VtyReplyReader {
  public:
    enum class Status : uint8_t { NeedMore, Prompt, PasswordPrompt, Done, Malformed, TooLarge };

    explicit VtyReplyReader(size_t maxBytes) : max_(maxBytes) {}

    // A login step: the banner before "Password: ", the answer to a password or `enable`.
    void expectLogin();
    // A command sent as "<command>\n! <marker>\n" (marker without the "! ").
    void expectCommand(std::string command, std::string marker);
    Status feed(std::string_view text);

    // After Done: the command's output ("\r\n" made "\n"), and the prompt it left.
    const std::string& output() const { return output_; }
    const std::string& prompt() const { return prompt_; }
    // After Malformed: what was wrong (never any of the sent text beyond the command).
    const std::string& problem() const { return problem_; }
    // What arrived so far (bounded by maxBytes), for "Vty password is not set." and logs.
    const std::string& received() const { return buffer_; }

  private:
    Status loginStatus();
    Status commandStatus();

    size_t max_;
    bool command_ = false;
    std::string sent_;
    std::string marker_;
    std::string buffer_;
    std::string output_;
    std::string prompt_;
    std::string problem_;
    size_t markerAt_ = std::string::npos;
    size_t scanFrom_ = 0;
};

// The comment line that ends a command: "! twinrail-" and 16 hex digits of `nonce`.
std::string vtyMarker(uint64_t nonce);

}  // namespace twinrail::frr
