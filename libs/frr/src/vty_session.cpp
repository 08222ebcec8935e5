#include "twinrail/frr/vty_session.h"

#include <algorithm>
#include <array>
#include <boost/asio/write.hpp>

#include "twinrail/common/log.h"
#include "twinrail/common/names.h"

namespace twinrail::frr {
namespace {
namespace asio = boost::asio;
constexpr size_t kReadChunk = size_t{64} * 1024;

bool endsWith(const std::string& text, std::string_view end) {
    return text.size() >= end.size() &&
           text.compare(text.size() - end.size(), end.size(), end) == 0;
}

void cancelQuietly(asio::steady_timer& timer) {
    try {
        timer.cancel();
    } catch (...) {  // NOLINT(bugprone-empty-catch): a timer that cannot be cancelled expires
    }
}

void wipe(std::string& secret) {
    std::fill(secret.begin(), secret.end(), '\0');
    secret.clear();
}

}  // namespace

std::shared_ptr<VtySession> VtySession::create(asio::io_context& io, VtySessionSettings settings) {
    return std::shared_ptr<VtySession>(new VtySession(io, std::move(settings)));
}

VtySession::VtySession(asio::io_context& io, VtySessionSettings settings)
    : settings_(std::move(settings)),
      socket_(io),
      deadline_(io),
      keepalive_(io),
      reconnect_(io),
      reader_(settings_.maxReply),
      random_(std::random_device{}()),
      reconnectDelay_(settings_.reconnectMin) {
    if (settings_.enablePassword.empty()) settings_.enablePassword = settings_.password;
}

VtySession::~VtySession() {
    shutdown();
    wipe(settings_.password);
    wipe(settings_.enablePassword);
}

std::string VtySession::describe() const {
    return settings_.name + " vty at " + settings_.endpoint.address().to_string() + ":" +
           std::to_string(settings_.endpoint.port());
}

void VtySession::shutdown() {
    stopped_ = true;
    watching_ = false;
    ++generation_;
    ++deadlineSeq_;
    boost::system::error_code ignored;
    socket_.close(ignored);
    cancelQuietly(deadline_);
    cancelQuietly(keepalive_);
    cancelQuietly(reconnect_);
    queue_.clear();
    wipe(out_);
    phase_ = Phase::Down;
}

void VtySession::run(std::vector<std::string> lines, Done done) {
    if (stopped_) return;
    Script script;
    script.lines = std::move(lines);
    script.done = std::move(done);
    queue_.push_back(std::move(script));
    if (phase_ == Phase::Down) {
        connect();
    } else if (phase_ == Phase::Ready) {
        startNext();
    }
}

void VtySession::watch(std::function<void()> onRestart) {
    if (stopped_) return;
    onRestart_ = std::move(onRestart);
    watching_ = true;
    if (phase_ == Phase::Down) connect();
}

void VtySession::unwatch() {
    watching_ = false;
    unreported_ = false;
    cancelQuietly(reconnect_);
}

void VtySession::connect() {
    cancelQuietly(reconnect_);
    cancelQuietly(keepalive_);
    boost::system::error_code ignored;
    socket_.close(ignored);
    telnet_ = TelnetFilter{};
    prompt_.clear();
    phase_ = Phase::Connecting;
    const uint64_t gen = ++generation_;
    armDeadline();
    socket_.async_connect(settings_.endpoint, [weak = weak_from_this(),
                                               gen](const boost::system::error_code& ec) {
        auto self = weak.lock();
        if (!self || gen != self->generation_) return;
        if (ec)
            return self->lose("cannot connect to " + self->describe() + ": " + ec.message(), false);
        self->phase_ = Phase::Banner;
        self->reader_.expectLogin();
        self->startRead();
    });
}

void VtySession::startRead() {
    const uint64_t gen = generation_;
    auto buffer = std::make_shared<std::array<char, kReadChunk>>();
    socket_.async_read_some(
        asio::buffer(*buffer),
        [weak = weak_from_this(), gen, buffer](const boost::system::error_code& ec, size_t n) {
            auto self = weak.lock();
            if (!self || gen != self->generation_) return;
            if (ec) {
                std::string why =
                    self->describe() +
                    (ec == asio::error::eof ? " closed the connection" : ": " + ec.message());
                if (self->reader_.received().find("Vty password is not set") != std::string::npos)
                    why += " (FRR has no vty password: add `password` to its configuration)";
                return self->lose(why, false);
            }
            self->onBytes(self->telnet_.filter(std::string_view(buffer->data(), n)));
            if (gen == self->generation_ && !self->stopped_) self->startRead();
        });
}

void VtySession::onBytes(const std::string& text) {
    switch (phase_) {
        case Phase::Banner:
        case Phase::Password:
        case Phase::Enable:
        case Phase::EnablePassword:
            return onLogin(reader_.feed(text));
        case Phase::TerminalLength:
        case Phase::Command:
            return onCommand(reader_.feed(text));
        default:
            return;  // nothing is asked: FRR has nothing to say (and it is not kept)
    }
}

void VtySession::onLogin(VtyReplyReader::Status status) {
    using Status = VtyReplyReader::Status;
    if (status == Status::NeedMore) return;
    if (status == Status::TooLarge || status == Status::Malformed) {
        return lose(describe() + " sent more than " + std::to_string(settings_.maxReply) +
                        " bytes without a prompt",
                    false);
    }
    const bool asksPassword = status == Status::PasswordPrompt;
    switch (phase_) {
        case Phase::Banner:
            if (!asksPassword) return afterPassword(reader_.prompt());  // `no login`
            phase_ = Phase::Password;
            reader_.expectLogin();
            return sendLine(settings_.password, true);
        case Phase::Password:
            if (asksPassword) {
                return lose(describe() + " refused the password (compare the password file with " +
                                "`password` in FRR's configuration)",
                            false);
            }
            return afterPassword(reader_.prompt());
        case Phase::Enable:
            if (asksPassword) {
                phase_ = Phase::EnablePassword;
                reader_.expectLogin();
                return sendLine(settings_.enablePassword, true);
            }
            break;
        case Phase::EnablePassword:
            if (asksPassword) {
                return lose(describe() + " refused the enable password (`enable password` in " +
                                "FRR's configuration)",
                            false);
            }
            break;
        default:
            return;
    }
    if (!endsWith(reader_.prompt(), "# ")) {
        return lose(describe() + " did not enter enable mode (prompt \"" +
                        names::printable(reader_.prompt()) + "\")",
                    false);
    }
    startTerminalLength();
}

void VtySession::afterPassword(const std::string& prompt) {
    if (endsWith(prompt, "# ")) return startTerminalLength();
    phase_ = Phase::Enable;
    reader_.expectLogin();
    sendLine("enable", false);
}

void VtySession::startTerminalLength() {
    phase_ = Phase::TerminalLength;
    sendCommand("terminal length 0");
}

void VtySession::loggedIn() {
    phase_ = Phase::Ready;
    reconnectDelay_ = settings_.reconnectMin;
    if (!lastProblem_.empty()) log::info("FRR: logged in to ", describe());
    lastProblem_.clear();
    if (unreported_ && watching_) {
        unreported_ = false;
        log::notice("FRR: ", settings_.name, " (re)started: its vty answers again");
        auto report = onRestart_;
        if (report) report();
        if (stopped_ || phase_ != Phase::Ready) return;
    }
    startNext();
}

void VtySession::onCommand(VtyReplyReader::Status status) {
    using Status = VtyReplyReader::Status;
    if (status == Status::NeedMore) return;
    if (status == Status::TooLarge) {
        return lose(
            describe() + ": answer larger than " + std::to_string(settings_.maxReply) + " bytes",
            false);
    }
    if (status == Status::Malformed) return lose(describe() + ": " + reader_.problem(), false);
    if (status != Status::Done) return lose(describe() + ": unexpected password prompt", false);
    const bool wasConfig = isConfigPrompt(prompt_);
    prompt_ = reader_.prompt();
    if (phase_ == Phase::TerminalLength) return loggedIn();
    Script& script = queue_.front();
    if (script.ending) return finishScript();
    const std::string& line = script.lines[script.next - 1];
    if (auto error = vtyError(reader_.output(), wasConfig)) {
        script.result.error =
            settings_.name + " refused \"" + names::printable(line, 200) + "\": " + *error;
    }
    script.result.output += reader_.output();
    if (script.result.error.empty() && script.next < script.lines.size())
        return sendCommand(script.lines[script.next++]);
    if (isConfigPrompt(prompt_)) {
        script.ending = true;  // never leave the next script in this one's config node
        return sendCommand("end");
    }
    finishScript();
}

void VtySession::sendCommand(const std::string& line) {
    const std::string marker = vtyMarker(random_());
    reader_.expectCommand(line, marker);
    sendLine(line + "\n! " + marker, false);
}

void VtySession::sendLine(const std::string& line, bool secret) {
    out_ = line + "\n";
    armDeadline();
    const uint64_t gen = generation_;
    asio::async_write(
        socket_, asio::buffer(out_),
        [weak = weak_from_this(), gen, secret](const boost::system::error_code& ec, size_t) {
            auto self = weak.lock();
            if (!self || gen != self->generation_) return;
            if (secret) wipe(self->out_);
            if (ec) self->lose("writing to " + self->describe() + ": " + ec.message(), false);
        });
}

void VtySession::armDeadline() {
    const uint64_t seq = ++deadlineSeq_;
    deadline_.expires_after(settings_.timeout);
    deadline_.async_wait([weak = weak_from_this(), seq](const boost::system::error_code& ec) {
        auto self = weak.lock();
        if (ec || !self || seq != self->deadlineSeq_) return;
        if (self->phase_ == Phase::Ready || self->phase_ == Phase::Down) return;
        self->lose("no answer from " + self->describe() + " within " +
                       std::to_string(self->settings_.timeout.count()) + " ms",
                   true);
    });
}

void VtySession::armKeepalive() {
    const uint64_t gen = generation_;
    keepalive_.expires_after(settings_.keepalive);
    keepalive_.async_wait([weak = weak_from_this(), gen](const boost::system::error_code& ec) {
        auto self = weak.lock();
        if (ec || !self || gen != self->generation_) return;
        if (self->phase_ != Phase::Ready || !self->queue_.empty()) return;
        Script ping;  // an empty line: FRR answers with a prompt, nothing else
        ping.lines.emplace_back();
        self->queue_.push_back(std::move(ping));
        self->startNext();
    });
}

void VtySession::startNext() {
    if (phase_ != Phase::Ready) return;
    if (queue_.empty()) return armKeepalive();
    cancelQuietly(keepalive_);
    Script& script = queue_.front();
    if (script.lines.empty()) return finishScript();
    phase_ = Phase::Command;
    sendCommand(script.lines[script.next++]);
}

void VtySession::finishScript() {
    ++deadlineSeq_;
    phase_ = Phase::Ready;
    Script script = std::move(queue_.front());
    queue_.pop_front();
    script.result.ok = script.result.error.empty();
    if (script.done) script.done(std::move(script.result));
    if (!stopped_) startNext();  // the callback may have queued more, or already started it
}

void VtySession::lose(const std::string& why, bool timedOut) {
    const bool wasLoggedIn = phase_ == Phase::Ready || phase_ == Phase::Command;
    ++generation_;
    ++deadlineSeq_;
    boost::system::error_code ignored;
    socket_.close(ignored);
    cancelQuietly(keepalive_);
    wipe(out_);
    phase_ = Phase::Down;
    if (watching_) unreported_ = true;
    if (why != lastProblem_) {
        log::warning("FRR: ", why);
        lastProblem_ = why;
    }
    // A failed login fails everything queued (the next attempt would fail the same way);
    // a connection lost under a script fails that script only.
    std::deque<Script> failed;
    if (!wasLoggedIn) {
        failed.swap(queue_);
    } else if (!queue_.empty() && queue_.front().next > 0) {
        failed.push_back(std::move(queue_.front()));
        queue_.pop_front();
    }
    for (auto& script : failed) {
        if (!script.done) continue;
        script.result.ok = false;
        script.result.error = why;
        script.result.timedOut = timedOut;
        script.done(std::move(script.result));
        if (stopped_) return;
    }
    if (phase_ != Phase::Down) return;  // a callback already started a new connection
    std::erase_if(queue_, [](const Script& s) { return !s.done; });  // no keepalive after a loss
    if (!queue_.empty()) return connect();
    if (watching_) scheduleReconnect();
}

void VtySession::scheduleReconnect() {
    reconnect_.expires_after(reconnectDelay_);
    reconnectDelay_ = std::min(reconnectDelay_ * 2, settings_.reconnectMax);
    reconnect_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
        auto self = weak.lock();
        if (ec || !self || self->stopped_ || self->phase_ != Phase::Down) return;
        self->connect();
    });
}

}  // namespace twinrail::frr
