#include "twinrail/frr/docker_engine.h"

#include <array>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <optional>

#include "twinrail/common/log.h"
#include "twinrail/frr/docker_stream.h"

namespace twinrail::frr::docker {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Socket = asio::local::stream_protocol::socket;
using Endpoint = asio::local::stream_protocol::endpoint;
using JsonDone = std::function<void(std::string error, unsigned status, std::string body)>;

constexpr size_t kMaxAnswerBytes = size_t{1} << 20;
constexpr size_t kMaxEventLine = size_t{1} << 20;
constexpr int kInspectTries = 50;  // the exit code can lag the end of the stream by a moment

http::request<http::string_body> makeRequest(http::verb verb, const std::string& target,
                                             std::string body) {
    http::request<http::string_body> req{verb, target, 11};
    req.set(http::field::host, "docker");
    if (!body.empty()) req.set(http::field::content_type, "application/json");
    req.body() = std::move(body);
    req.prepare_payload();
    return req;
}

// One exec: create, start (its output), then the exit code; on fresh connections.
class ExecCall : public std::enable_shared_from_this<ExecCall> {
  public:
    ExecCall(asio::io_context& io, const EngineOptions& o, std::weak_ptr<bool> alive,
             std::string container, std::vector<std::string> argv, Engine::ExecDone done)
        : io_(io),
          options_(o),
          alive_(std::move(alive)),
          container_(std::move(container)),
          argv_(std::move(argv)),
          done_(std::move(done)),
          socket_(io),
          timer_(io),
          pause_(io),
          demux_(o.maxOutput) {}

    void start() {
        timer_.expires_after(options_.timeout);
        timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (ec) return;
            self->result_.timedOut = true;
            self->finish("no answer within " + std::to_string(self->options_.timeout.count()) +
                         " ms");
        });
        json(http::verb::post, "/containers/" + container_ + "/exec", execCreateBody(argv_),
             [self = shared_from_this()](std::string e, unsigned status, const std::string& body) {
                 self->created(std::move(e), status, body);
             });
    }

  private:
    void created(std::string error, unsigned status, const std::string& body) {
        if (!error.empty()) return finish(std::move(error));
        if (status != 201) return finish("exec in " + container_ + ": " + errorMessageOf(body));
        std::string why;
        auto id = execIdOf(body, why);
        if (!id) return finish("exec in " + container_ + ": " + why);
        id_ = *id;
        startStream();
    }

    void startStream() {
        auto req = std::make_shared<http::request<http::string_body>>(
            makeRequest(http::verb::post, "/exec/" + id_ + "/start", execStartBody()));
        connectThen([self = shared_from_this(), req] {
            http::async_write(self->socket_, *req, [self, req](beast::error_code ec, size_t /*n*/) {
                if (ec) return self->finish("exec start: " + ec.message());
                self->readStreamHeader();
            });
        });
    }

    void readStreamHeader() {
        header_.emplace();
        http::async_read_header(
            socket_, buffer_, *header_,
            [self = shared_from_this()](beast::error_code ec, size_t /*n*/) {
                if (ec) return self->finish("exec start: " + ec.message());
                const unsigned status = self->header_->get().result_int();
                if (status != 200 && status != 101)
                    return self->finish("exec start: HTTP " + std::to_string(status));
                // What the header read took beyond the header is output.
                const auto data = self->buffer_.data();
                self->demux_.feed({static_cast<const char*>(data.data()), data.size()});
                self->buffer_.consume(self->buffer_.size());
                self->readOutput();
            });
    }

    void readOutput() {
        socket_.async_read_some(asio::buffer(chunk_), [self = shared_from_this()](
                                                          boost::system::error_code ec, size_t n) {
            self->demux_.feed({self->chunk_.data(), n});
            if (self->demux_.error()) return self->finish("exec output: " + *self->demux_.error());
            if (!ec) return self->readOutput();
            if (ec != asio::error::eof) return self->finish("exec output: " + ec.message());
            self->demux_.finish();
            if (self->demux_.error()) return self->finish("exec output: " + *self->demux_.error());
            self->inspect();
        });
    }

    void inspect() {
        json(http::verb::get, "/exec/" + id_ + "/json", "",
             [self = shared_from_this()](std::string e, unsigned status, const std::string& body) {
                 self->inspected(std::move(e), status, body);
             });
    }

    void inspected(std::string error, unsigned status, const std::string& body) {
        if (!error.empty()) return finish(std::move(error));
        std::string why;
        auto state = status == 200 ? execStateOf(body, why) : std::nullopt;
        if (!state) return finish("exec state: " + (why.empty() ? errorMessageOf(body) : why));
        if (state->running && ++inspectTries_ < kInspectTries) {
            pause_.expires_after(std::chrono::milliseconds(10));
            pause_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
                if (!ec) self->inspect();
            });
            return;
        }
        if (state->running) return finish("the exec's output ended but it still runs");
        result_.exitCode = state->exitCode;
        finish("");
    }

    // A JSON request on a fresh connection; the whole answer, bounded.
    void json(http::verb verb, const std::string& target, std::string body, JsonDone then) {
        auto req = std::make_shared<http::request<http::string_body>>(
            makeRequest(verb, target, std::move(body)));
        connectThen([self = shared_from_this(), req, then = std::move(then)] {
            http::async_write(self->socket_, *req, [self, req, then](beast::error_code ec, size_t) {
                if (ec) return then("Docker: " + ec.message(), 0, "");
                self->answer_.emplace();
                self->answer_->body_limit(kMaxAnswerBytes);
                http::async_read(self->socket_, self->buffer_, *self->answer_,
                                 [self, then](beast::error_code ec2, size_t) {
                                     if (ec2) return then("Docker: " + ec2.message(), 0, "");
                                     auto res = self->answer_->release();
                                     then("", res.result_int(), std::move(res.body()));
                                 });
            });
        });
    }

    void connectThen(std::function<void()> next) {
        boost::system::error_code ignored;
        socket_.close(ignored);
        buffer_.consume(buffer_.size());
        socket_.async_connect(
            Endpoint(options_.socket),
            [self = shared_from_this(), next = std::move(next)](boost::system::error_code ec) {
                if (self->finished_) return;
                if (ec) {
                    return self->finish("Docker at " + self->options_.socket + ": " + ec.message());
                }
                next();
            });
    }

    void finish(std::string error) {
        if (finished_) return;
        finished_ = true;
        boost::system::error_code ignored;
        socket_.close(ignored);
        timer_.cancel();
        pause_.cancel();
        result_.error = std::move(error);
        result_.out = demux_.out();
        result_.err = demux_.err();
        if (!result_.error.empty()) result_.exitCode = -1;
        // Never from inside the caller's exec(): always through the loop.
        asio::post(io_, [self = shared_from_this()] {
            if (self->alive_.expired()) return;
            self->done_(std::move(self->result_));
        });
    }

    asio::io_context& io_;
    EngineOptions options_;
    std::weak_ptr<bool> alive_;
    std::string container_;
    std::vector<std::string> argv_;
    Engine::ExecDone done_;
    Socket socket_;
    asio::steady_timer timer_;
    asio::steady_timer pause_;
    beast::flat_buffer buffer_;
    std::optional<http::response_parser<http::empty_body>> header_;
    std::optional<http::response_parser<http::string_body>> answer_;
    std::array<char, 16384> chunk_{};
    StreamDemux demux_;
    std::string id_;
    int inspectTries_ = 0;
    bool finished_ = false;
    ExecResult result_;
};

}  // namespace

// The event stream of one container's starts: chunked JSON, one event per line.
struct Engine::Watch {
    explicit Watch(asio::io_context& io) : socket(io), retry(io) {}
    std::string container;
    std::function<void()> onStart;
    Socket socket;
    asio::steady_timer retry;
    beast::flat_buffer buffer;
    std::optional<http::response_parser<http::string_body>> parser;
    std::string line;
    std::chrono::milliseconds delay{0};
    // Each piece of the chunked body, split into event lines (weak: the callback is held
    // by the watch itself).
    std::function<std::size_t(std::uint64_t, beast::string_view, beast::error_code&)> chunkBody;
    bool up = false;    // the stream's header arrived
    bool lost = false;  // the stream was up and dropped: the next connect is news
};

std::shared_ptr<Engine> Engine::create(asio::io_context& io, EngineOptions options) {
    return std::shared_ptr<Engine>(new Engine(io, std::move(options)));
}

Engine::Engine(asio::io_context& io, EngineOptions options)
    : io_(io), options_(std::move(options)), alive_(std::make_shared<bool>(true)) {}

Engine::~Engine() {
    try {
        stop();
    } catch (const std::exception&) {  // closing a socket or a timer that is gone: nothing to do
    }
}

void Engine::stop() {
    stopped_ = true;
    alive_.reset();
    if (watch_) {
        boost::system::error_code ignored;
        watch_->socket.close(ignored);
        watch_->retry.cancel();
    }
}

void Engine::unwatch() {
    if (!watch_) return;
    boost::system::error_code ignored;
    watch_->onStart = nullptr;
    watch_->socket.close(ignored);
    watch_->retry.cancel();
    watch_.reset();
}

void Engine::exec(const std::string& container, std::vector<std::string> argv, ExecDone done) {
    if (auto why = checkContainerName(container)) {
        ExecResult refused;
        refused.error = "container name " + *why;
        asio::post(io_, [done = std::move(done), refused = std::move(refused)] { done(refused); });
        return;
    }
    std::make_shared<ExecCall>(io_, options_, alive_, container, std::move(argv), std::move(done))
        ->start();
}

void Engine::watchStarts(const std::string& container, std::function<void()> onStart) {
    watch_ = std::make_shared<Watch>(io_);
    watch_->container = container;
    watch_->onStart = std::move(onStart);
    std::weak_ptr<Watch> weak = watch_;
    watch_->chunkBody = [weak](std::uint64_t, beast::string_view body,
                               beast::error_code&) -> std::size_t {
        auto w = weak.lock();
        if (!w) return body.size();
        for (char c : body) {
            if (c != '\n') {
                if (w->line.size() < kMaxEventLine) w->line += c;
                continue;
            }
            if (isStartEvent(w->line, w->container) && w->onStart) w->onStart();
            w->line.clear();
        }
        return body.size();
    };
    if (auto why = checkContainerName(container)) {
        log::error("docker: cannot watch container \"", container, "\": ", *why);
        return;
    }
    connectWatch();
}

void Engine::connectWatch() {
    auto w = watch_;
    std::weak_ptr<bool> alive = alive_;
    boost::system::error_code ignored;
    w->socket.close(ignored);
    w->socket.async_connect(Endpoint(options_.socket), [this, w,
                                                        alive](boost::system::error_code ec) {
        if (alive.expired() || stopped_ || w != watch_) return;
        if (ec) return retryWatch();
        auto req = std::make_shared<http::request<http::string_body>>(
            makeRequest(http::verb::get, startEventsPath(w->container), ""));
        http::async_write(w->socket, *req, [this, w, alive, req](beast::error_code ec2, size_t) {
            if (alive.expired() || stopped_ || w != watch_) return;
            if (ec2) return retryWatch();
            w->buffer.consume(w->buffer.size());
            w->parser.emplace();
            w->parser->body_limit(boost::none);
            // Beast keeps a reference to the callback: it lives in the watch.
            w->parser->on_chunk_body(w->chunkBody);
            readWatch();
        });
    });
}

void Engine::readWatch() {
    auto w = watch_;
    std::weak_ptr<bool> alive = alive_;
    http::async_read_some(w->socket, w->buffer, *w->parser,
                          [this, w, alive](beast::error_code ec, size_t /*n*/) {
                              if (alive.expired() || stopped_ || w != watch_) return;
                              if (ec) {
                                  w->lost = w->lost || w->up;
                                  w->up = false;
                                  return retryWatch();
                              }
                              if (!w->up && w->parser->is_header_done()) {
                                  if (w->parser->get().result_int() != 200) {
                                      log::warning("docker: events of ", w->container, ": HTTP ",
                                                   w->parser->get().result_int());
                                      return retryWatch();
                                  }
                                  w->up = true;
                                  w->delay = std::chrono::milliseconds(0);
                                  if (w->lost && w->onStart) w->onStart();  // one may be missed
                                  w->lost = false;
                              }
                              readWatch();
                          });
}

void Engine::retryWatch() {
    auto w = watch_;
    w->delay = w->delay.count() == 0 ? options_.reconnectMin
                                     : std::min(w->delay * 2, options_.reconnectMax);
    std::weak_ptr<bool> alive = alive_;
    w->retry.expires_after(w->delay);
    w->retry.async_wait([this, w, alive](boost::system::error_code ec) {
        if (ec || alive.expired() || stopped_ || w != watch_) return;
        connectWatch();
    });
}

}  // namespace twinrail::frr::docker
