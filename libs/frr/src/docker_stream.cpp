#include "twinrail/frr/docker_stream.h"

#include "twinrail/common/names.h"

namespace twinrail::frr::docker {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxAnswer = 1 << 20;  // a JSON answer is small; anything bigger is wrong

std::optional<json> parseAnswer(std::string_view answer, std::string& error) {
    if (answer.size() > kMaxAnswer) {
        error = "an answer of " + std::to_string(answer.size()) + " bytes";
        return std::nullopt;
    }
    auto j = json::parse(answer, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        error = "not a JSON object: \"" + names::printable(std::string(answer), 120) + "\"";
        return std::nullopt;
    }
    return j;
}

bool nameChar(char c, bool first) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    return alnum || (!first && (c == '_' || c == '.' || c == '-'));
}

}  // namespace

std::optional<std::string> checkContainerName(std::string_view name) {
    if (name.empty() || name.size() > 128) return "is not 1-128 characters";
    for (size_t i = 0; i < name.size(); ++i) {
        if (!nameChar(name[i], i == 0)) {
            return "has \"" + names::printable(std::string(1, name[i])) + "\" at offset " +
                   std::to_string(i) + " (Docker names are [a-zA-Z0-9][a-zA-Z0-9_.-]*)";
        }
    }
    return std::nullopt;
}

std::string execCreateBody(const std::vector<std::string>& argv, const std::string& user) {
    json body = {{"AttachStdin", false},
                 {"AttachStdout", true},
                 {"AttachStderr", true},
                 {"Tty", false},
                 {"Cmd", argv}};
    if (!user.empty()) body["User"] = user;
    return body.dump();
}

std::string execStartBody() {
    return R"({"Detach":false,"Tty":false})";
}

std::optional<std::string> execIdOf(std::string_view answer, std::string& error) {
    auto j = parseAnswer(answer, error);
    if (!j) return std::nullopt;
    auto id = j->find("Id");
    if (id == j->end() || !id->is_string() || id->get<std::string>().empty() ||
        id->get<std::string>().find_first_not_of("0123456789abcdef") != std::string::npos) {
        error = "no exec Id in the answer";
        return std::nullopt;
    }
    return id->get<std::string>();
}

std::optional<ExecState> execStateOf(std::string_view answer, std::string& error) {
    auto j = parseAnswer(answer, error);
    if (!j) return std::nullopt;
    auto running = j->find("Running");
    auto code = j->find("ExitCode");
    if (running == j->end() || !running->is_boolean() || code == j->end() ||
        !code->is_number_integer()) {
        error = "no Running and ExitCode in the exec's state";
        return std::nullopt;
    }
    return ExecState{running->get<bool>(), code->get<int>()};
}

std::string errorMessageOf(std::string_view answer) {
    std::string ignored;
    if (auto j = parseAnswer(answer, ignored)) {
        auto m = j->find("message");
        if (m != j->end() && m->is_string()) return names::printable(m->get<std::string>(), 300);
    }
    return names::printable(std::string(answer), 300);
}

std::string startEventsPath(const std::string& container) {
    // filters={"container":["<name>"],"type":["container"],"event":["start"]}, escaped.
    return "/events?filters=%7B%22container%22%3A%5B%22" + container +
           "%22%5D%2C%22type%22%3A%5B%22container%22%5D%2C%22event%22%3A%5B%22start%22%5D%7D";
}

bool isStartEvent(std::string_view line, const std::string& container) {
    auto j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return false;
    if (j.value("Type", "") != "container" || j.value("Action", "") != "start") return false;
    auto actor = j.find("Actor");
    if (actor == j.end() || !actor->is_object()) return false;
    auto attrs = actor->find("Attributes");
    return attrs != actor->end() && attrs->is_object() && attrs->value("name", "") == container;
}

void StreamDemux::feed(std::string_view bytes) {
    while (!bytes.empty() && !error_) {
        if (left_ == 0) {
            const size_t take = std::min(bytes.size(), 8 - header_.size());
            header_.append(bytes.substr(0, take));
            bytes.remove_prefix(take);
            if (header_.size() < 8) return;
            const auto* h = reinterpret_cast<const unsigned char*>(header_.data());
            stream_ = h[0];
            if ((stream_ != 1 && stream_ != 2) || h[1] != 0 || h[2] != 0 || h[3] != 0) {
                error_ = "a frame header that is not stdout or stderr";
                return;
            }
            left_ = (uint32_t{h[4]} << 24) | (uint32_t{h[5]} << 16) | (uint32_t{h[6]} << 8) | h[7];
            header_.clear();
            continue;
        }
        const size_t take = std::min<size_t>(bytes.size(), left_);
        std::string& into = stream_ == 1 ? out_ : err_;
        if (out_.size() + err_.size() + take > maxBytes_) {
            error_ = "more than " + std::to_string(maxBytes_) + " bytes of output";
            return;
        }
        into.append(bytes.substr(0, take));
        left_ -= static_cast<uint32_t>(take);
        bytes.remove_prefix(take);
    }
}

void StreamDemux::finish() {
    if (!error_ && (left_ != 0 || !header_.empty())) error_ = "the output ends inside a frame";
}

}  // namespace twinrail::frr::docker
