#include "twinrail/common/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>
#include <cstring>

namespace twinrail {
namespace {

// The child writes its output into anonymous files, not pipes, read once it has exited:
// a child whose parent dies (a daemon killed with -9 in the middle of a vtysh batch) then
// runs to its end instead of dying of SIGPIPE half-way, so a batch of configuration and
// its soft refreshes is applied whole or (if never started) not at all; and a large
// output (a route table as JSON) never stalls on a full pipe.
struct Outputs {
    int out = -1;
    int err = -1;
    ~Outputs() {
        for (int fd : {out, err})
            if (fd >= 0) ::close(fd);
    }
};

std::string readAll(int fd) {
    std::string text;
    char buf[65536];
    for (off_t at = 0;;) {
        ssize_t n = ::pread(fd, buf, sizeof(buf), at);
        if (n <= 0) break;
        text.append(buf, static_cast<size_t>(n));
        at += n;
    }
    return text;
}

// Returns the pid, or -1 with `error` set.
pid_t spawn(const std::vector<std::string>& argv, const Outputs& o, int& error) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, o.out, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, o.err, STDERR_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    error = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    return error == 0 ? pid : -1;
}

int openPidfd(pid_t pid) {
    // glibc 2.36 declares pidfd_open() without C linkage for C++; use the syscall.
    return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

// Owns one running child; kept alive by the handlers that reference it.
struct Child : std::enable_shared_from_this<Child> {
    Child(boost::asio::io_context& io, int pidFd, pid_t childPid)
        : pidfd(io, pidFd), timer(io), pid(childPid) {}

    boost::asio::posix::stream_descriptor pidfd;
    boost::asio::steady_timer timer;
    pid_t pid;
    Outputs outputs;
    ProcessResult result;
    ProcessCallback done;

    void waitExit() {
        pidfd.async_wait(
            boost::asio::posix::stream_descriptor::wait_read,
            [self = shared_from_this()](const boost::system::error_code&) { self->exited(); });
    }
    void exited() {
        int status = 0;
        if (::waitpid(pid, &status, 0) == pid && WIFEXITED(status))
            result.exitCode = WEXITSTATUS(status);
        timer.cancel();
        result.out = readAll(outputs.out);
        result.err = readAll(outputs.err);
        if (done) done(std::move(result));
    }
    void armTimeout(std::chrono::milliseconds timeout) {
        timer.expires_after(timeout);
        timer.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
            if (ec) return;
            self->result.timedOut = true;
            ::kill(self->pid, SIGKILL);
        });
    }
};

void failLater(boost::asio::io_context& io, ProcessCallback done, std::string why) {
    ProcessResult failed;
    failed.err = std::move(why);
    boost::asio::post(io, [done = std::move(done), failed = std::move(failed)]() mutable {
        done(std::move(failed));
    });
}

}  // namespace

void runProcess(boost::asio::io_context& io, std::vector<std::string> argv,
                std::chrono::milliseconds timeout, ProcessCallback done) {
    Outputs o;
    o.out = ::memfd_create("child-stdout", MFD_CLOEXEC);
    o.err = ::memfd_create("child-stderr", MFD_CLOEXEC);
    if (o.out < 0 || o.err < 0)
        return failLater(io, std::move(done), std::string("memfd: ") + std::strerror(errno));
    int error = 0;
    pid_t pid = spawn(argv, o, error);
    if (pid < 0) {
        return failLater(io, std::move(done),
                         "cannot start " + argv.front() + ": " + std::strerror(error));
    }
    int pfd = openPidfd(pid);
    if (pfd < 0) {
        int e = errno;
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        return failLater(io, std::move(done), std::string("pidfd: ") + std::strerror(e));
    }
    auto child = std::make_shared<Child>(io, pfd, pid);
    std::swap(child->outputs.out, o.out);
    std::swap(child->outputs.err, o.err);
    child->done = std::move(done);
    child->waitExit();
    child->armTimeout(timeout);
}

ProcessResult runProcessSync(const std::vector<std::string>& argv,
                             std::chrono::milliseconds timeout) {
    boost::asio::io_context io;
    ProcessResult result;
    runProcess(io, argv, timeout, [&result](ProcessResult r) { result = std::move(r); });
    io.run();
    return result;
}

}  // namespace twinrail
