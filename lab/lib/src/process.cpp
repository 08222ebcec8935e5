#include "twinrail/lab/process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace twinrail::lab {

ChildProcess::ChildProcess(std::vector<std::string> argv, std::string logPath, ChildOptions options)
    : log_(std::move(logPath)) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e)
        if (!options.notify || std::strncmp(*e, "NOTIFY_SOCKET=", 14) != 0) env.emplace_back(*e);
    if (options.notify) {
        static int counter = 0;
        notify_ = std::make_unique<NotifyListener>("/tmp/trl-notify-" + std::to_string(::getpid()) +
                                                   "-" + std::to_string(++counter));
        env.push_back("NOTIFY_SOCKET=" + notify_->path());
    }
    std::vector<char*> envp;
    envp.reserve(env.size() + 1);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log_.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
    std::vector<char*> args;
    args.reserve(argv.size());
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    int rc = posix_spawnp(&pid_, args[0], &fa, nullptr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        notify_.reset();
        throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
    }
}

ChildProcess::~ChildProcess() {
    stop();
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(other.pid_),
      exitCode_(other.exitCode_),
      log_(std::move(other.log_)),
      notify_(std::move(other.notify_)) {
    other.pid_ = -1;
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
    if (this != &other) {
        stop();
        pid_ = other.pid_;
        exitCode_ = other.exitCode_;
        log_ = std::move(other.log_);
        notify_ = std::move(other.notify_);
        other.pid_ = -1;
    }
    return *this;
}

bool ChildProcess::waitReady(std::chrono::milliseconds timeout) {
    return notify_ && notify_->waitReady(timeout, [this] { return running(); });
}

std::string ChildProcess::notifyStatus() const {
    return notify_ ? notify_->status() : "";
}

bool ChildProcess::running() {
    if (pid_ <= 0 || exitCode_) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exitCode_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return false;
    }
    return true;
}

void ChildProcess::signal(int sig) const {
    if (pid_ > 0 && !exitCode_) ::kill(pid_, sig);
}

std::optional<int> ChildProcess::wait(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (running()) {
        if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return exitCode_;
}

void ChildProcess::stop() {
    if (!running()) return;
    signal(SIGTERM);
    if (!wait(std::chrono::seconds(5))) {
        signal(SIGKILL);
        wait(std::chrono::seconds(5));
    }
}

std::string ChildProcess::log() const {
    std::ifstream in(log_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace twinrail::lab
