// The Docker Engine API's wire formats that reaching FRR in its container needs, as pure
// functions (docker_engine.h does the I/O): the exec request bodies, the multiplexed
// output stream of an exec without a TTY, and the JSON answers. Every answer is hostile
// until parsed: sizes are bounded and a malformed one is an error, never a crash.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace twinrail::frr::docker {

// A container name as Docker takes it ([a-zA-Z0-9][a-zA-Z0-9_.-]*, at most 128), so that it
// can go into a request path as it is. Why not, or nothing.
std::optional<std::string> checkContainerName(std::string_view name);

// POST /containers/<name>/exec: run `argv` with stdout and stderr attached, no TTY, no
// stdin. `user` empty: the container's default user.
std::string execCreateBody(const std::vector<std::string>& argv, const std::string& user = "");
// POST /exec/<id>/start.
std::string execStartBody();
// The exec's id from the create answer, or nothing (and why in `error`).
std::optional<std::string> execIdOf(std::string_view answer, std::string& error);

// GET /exec/<id>/json: whether it still runs, and its exit code once it does not.
struct ExecState {
    bool running = false;
    int exitCode = -1;
};
std::optional<ExecState> execStateOf(std::string_view answer, std::string& error);

// The message of a Docker error answer ({"message": ...}), or the answer itself (cut).
std::string errorMessageOf(std::string_view answer);

// GET /events?filters=...: container start events of `container` only.
std::string startEventsPath(const std::string& container);
// One event line of that stream: true when it is `container` starting.
bool isStartEvent(std::string_view line, const std::string& container);

// The stream of an exec without a TTY: frames of an 8-byte header (stream 1 stdout or 2
// stderr, three zero bytes, the payload's length big-endian) and the payload. Fed in
// pieces as they arrive.
class StreamDemux {
  public:
    explicit StreamDemux(size_t maxBytes) : maxBytes_(maxBytes) {}
    void feed(std::string_view bytes);
    // At the end of the stream: a frame cut in the middle is an error.
    void finish();
    const std::string& out() const { return out_; }
    const std::string& err() const { return err_; }
    // Set on the first malformed frame or when the output passes maxBytes; later input is
    // ignored.
    const std::optional<std::string>& error() const { return error_; }

  private:
    size_t maxBytes_;
    std::string header_;
    uint32_t left_ = 0;
    int stream_ = 0;
    std::string out_;
    std::string err_;
    std::optional<std::string> error_;
};

}  // namespace twinrail::frr::docker
