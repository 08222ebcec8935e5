#include "twinrail/frr/vty_protocol.h"

#include <array>

namespace twinrail::frr {
namespace {

constexpr unsigned char kIac = 255;
constexpr unsigned char kSb = 250;
constexpr unsigned char kSe = 240;
constexpr unsigned char kWill = 251;
constexpr unsigned char kDont = 254;
constexpr std::string_view kPasswordPrompt = "Password: ";
constexpr std::string_view kCrLf = "\r\n";
// A prompt is a host name and a node: anything longer after the marker is not one.
constexpr size_t kMaxPrompt = 512;

std::string hexByte(unsigned char byte) {
    static constexpr std::string_view kHex = "0123456789abcdef";
    return std::string("0x") + kHex[byte >> 4] + kHex[byte & 0xf];
}

std::string crlfToLf(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;
        out.push_back(text[i]);
    }
    return out;
}

bool startsWith(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

}  // namespace

std::string TelnetFilter::filter(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    for (char c : bytes) {
        const auto byte = static_cast<unsigned char>(c);
        switch (state_) {
            case State::Data:
                if (byte == kIac) {
                    state_ = State::Iac;
                } else if (byte != 0) {
                    out.push_back(c);
                }
                break;
            case State::Iac:
                if (byte == kIac) {
                    out.push_back(c);  // IAC IAC: a literal 0xff
                    state_ = State::Data;
                } else if (byte == kSb) {
                    state_ = State::Sub;
                } else if (byte >= kWill && byte <= kDont) {
                    state_ = State::Option;
                } else {
                    state_ = State::Data;  // NOP, GA, AYT...: two bytes, nothing to keep
                }
                break;
            case State::Option:
                state_ = State::Data;
                break;
            case State::Sub:
                if (byte == kIac) state_ = State::SubIac;
                break;
            case State::SubIac:
                state_ = byte == kSe ? State::Data : State::Sub;
                break;
        }
    }
    return out;
}

std::optional<std::string> checkVtyLine(std::string_view line) {
    if (line.size() > kMaxVtyLine) {
        return "is " + std::to_string(line.size()) + " bytes long; FRR's vty keeps " +
               std::to_string(kMaxVtyLine) + " at most";
    }
    for (size_t i = 0; i < line.size(); ++i) {
        const auto byte = static_cast<unsigned char>(line[i]);
        if (byte < 0x20 || byte >= 0x7f) {
            return "contains byte " + hexByte(byte) + " at offset " + std::to_string(i) +
                   " (FRR's vty would edit or drop it)";
        }
        if (byte == '?')
            return "contains '?' at offset " + std::to_string(i) + " (FRR's vty shows help there)";
    }
    return std::nullopt;
}

bool isPrompt(std::string_view line) {
    if (line.size() < 3 || line.size() > kMaxPrompt) return false;
    const std::string_view end = line.substr(line.size() - 2);
    if (end != "> " && end != "# ") return false;
    return line.substr(0, line.size() - 2).find_first_of(" \r\n") == std::string_view::npos;
}

bool isConfigPrompt(std::string_view prompt) {
    return isPrompt(prompt) && prompt.find("(config") != std::string_view::npos;
}

std::optional<std::string> vtyError(std::string_view output, bool inConfig) {
    static constexpr std::array<std::string_view, 5> kParserErrors = {
        "Unknown command", "% Ambiguous command", "% Command incomplete", "% Invalid input",
        "% Configuration failed"};
    size_t start = 0;
    while (start < output.size()) {
        size_t end = output.find('\n', start);
        if (end == std::string_view::npos) end = output.size();
        std::string_view line = output.substr(start, end - start);
        start = end + 1;
        if (line.empty() || line.front() != '%') continue;
        if (inConfig) return std::string(line);
        for (auto error : kParserErrors) {
            if (line.find(error) != std::string_view::npos) return std::string(line);
        }
    }
    return std::nullopt;
}

void VtyReplyReader::expectLogin() {
    command_ = false;
    buffer_.clear();
    output_.clear();
    prompt_.clear();
    problem_.clear();
    markerAt_ = std::string::npos;
    scanFrom_ = 0;
}

void VtyReplyReader::expectCommand(std::string command, std::string marker) {
    expectLogin();
    command_ = true;
    sent_ = std::move(command);
    marker_ = "! " + std::move(marker) + std::string(kCrLf);
}

VtyReplyReader::Status VtyReplyReader::feed(std::string_view text) {
    if (buffer_.size() + text.size() > max_) {
        buffer_.clear();  // nothing kept past the bound
        return Status::TooLarge;
    }
    buffer_.append(text);
    return command_ ? commandStatus() : loginStatus();
}

VtyReplyReader::Status VtyReplyReader::loginStatus() {
    // Only the tail matters: a prompt is short, and the banner before it may not be.
    std::string_view all = buffer_;
    if (all.size() > kMaxPrompt + kCrLf.size()) all = all.substr(all.size() - kMaxPrompt - 2);
    if (all.size() >= kPasswordPrompt.size() &&
        all.substr(all.size() - kPasswordPrompt.size()) == kPasswordPrompt)
        return Status::PasswordPrompt;
    const size_t nl = all.rfind(kCrLf);
    const std::string_view last = nl == std::string_view::npos ? all : all.substr(nl + 2);
    if (!isPrompt(last)) return Status::NeedMore;
    prompt_ = std::string(last);
    return Status::Prompt;
}

VtyReplyReader::Status VtyReplyReader::commandStatus() {
    const std::string_view all = buffer_;
    if (markerAt_ == std::string::npos) {
        // Each byte is searched once: a long answer arrives in many pieces.
        markerAt_ = all.find(marker_, scanFrom_);
        if (markerAt_ == std::string::npos) {
            scanFrom_ = all.size() >= marker_.size() ? all.size() - marker_.size() + 1 : 0;
            return Status::NeedMore;
        }
    }
    const size_t at = markerAt_;
    const std::string_view after = all.substr(at + marker_.size());
    if (after.find('\n') != std::string_view::npos || after.size() > kMaxPrompt) {
        problem_ = "text after the end of the answer";
        return Status::Malformed;
    }
    if (!isPrompt(after)) return Status::NeedMore;
    // A comment leaves the node as it was: the prompt before the marker's echo is the
    // same one, and it ends the command's output.
    const std::string_view before = all.substr(0, at);
    if (before.size() < after.size() || before.substr(before.size() - after.size()) != after) {
        problem_ = "the prompt before the end marker is not \"" + std::string(after) + "\"";
        return Status::Malformed;
    }
    const std::string echo = sent_ + std::string(kCrLf);
    if (!startsWith(before, echo)) {
        problem_ = "FRR did not echo the command as sent (cut or edited on the way)";
        return Status::Malformed;
    }
    output_ = crlfToLf(before.substr(echo.size(), before.size() - after.size() - echo.size()));
    prompt_ = std::string(after);
    return Status::Done;
}

std::string vtyMarker(uint64_t nonce) {
    static constexpr std::string_view kHex = "0123456789abcdef";
    std::string out = "twinrail-";
    for (int shift = 60; shift >= 0; shift -= 4) out.push_back(kHex[(nonce >> shift) & 0xf]);
    return out;
}

}  // namespace twinrail::frr
