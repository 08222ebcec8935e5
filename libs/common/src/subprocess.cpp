#include "twinrail/common/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>



namespace twinrail {
namespace {

struct Pipes {
    int out[2] = {-1, -1};
    int err[2] = {-1, -1};
};

pid_t spawn(const std::vector<std::string>& argv, Pipes& p) {
    if (pipe2(p.out, O_CLOEXEC) != 0) return -1;
    if (pipe2(p.err, O_CLOEXEC) != 0) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p.out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, p.err[1], STDERR_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    std::vector<char*> args;
    args.reserve(argv.size());
for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(p.out[1]);
    ::close(p.err[1]);
    return rc == 0 ? pid : -1;
}

int openPidfd(pid_t pid) {
    // glibc 2.36 declares pidfd_open() without C linkage for C++; use the syscall.
    return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

int decodeStatus(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return -1;
}

// Owns one running child; kept alive by the handlers that reference it.
struct Child : std::enable_shared_from_this<Child> {
    Child(boost::asio::io_context& io, int outFd, int errFd, int pidFd, pid_t childPid)
        : out(io, outFd), err(io, errFd), pidfd(io, pidFd), timer(io), pid(childPid) {}

    boost::asio::posix::stream_descriptor out, err, pidfd;
    boost::asio::steady_timer timer;
    pid_t pid;
    ProcessResult result;
    ProcessCallback done;
    int pending = 3;  // stdout EOF, stderr EOF, exit
    std::array<char, 4096> bufOut{}, bufErr{};

    void readInto(boost::asio::posix::stream_descriptor& fd, std::array<char, 4096>& buf,
                  std::string& sink) {
        fd.async_read_some(boost::asio::buffer(buf),
                           [self = shared_from_this(), &fd, &buf, &sink](
                               const boost::system::error_code& ec, size_t n) {
                               if (ec) return self->finishOne();
                               sink.append(buf.data(), n);
                               self->readInto(fd, buf, sink);
                           });
    }

    void waitExit() {
        pidfd.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                         [self = shared_from_this()](const boost::system::error_code&) {
                             int status = 0;
                             if (::waitpid(self->pid, &status, 0) == self->pid)
                                 self->result.exitCode = decodeStatus(status);
                             self->timer.cancel();
                             self->finishOne();
                         });
    }

    void armTimeout(std::chrono::milliseconds timeout) {
        timer.expires_after(timeout);
        timer.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
            if (ec) return;
            self->result.timedOut = true;
            ::kill(self->pid, SIGKILL);
        });
    }

    void finishOne() {
        if (--pending == 0 && done) done(std::move(result));
    }
};

}  // namespace

void runProcess(boost::asio::io_context& io, std::vector<std::string> argv,
                std::chrono::milliseconds timeout, ProcessCallback done) {
    Pipes p;
    pid_t pid = spawn(argv, p);
    int pfd = pid > 0 ? openPidfd(pid) : -1;
    if (pid <= 0 || pfd < 0) {
        for (int fd : {p.out[0], p.err[0]})
            if (fd >= 0) ::close(fd);
        ProcessResult failed;
        failed.err = "cannot start " + argv.front() + ": " + std::strerror(errno);
        io.post([done = std::move(done), failed = std::move(failed)]() mutable {
            done(std::move(failed));
        });
        return;
    }
    auto child = std::make_shared<Child>(io, p.out[0], p.err[0], pfd, pid);
    child->done = std::move(done);
    child->readInto(child->out, child->bufOut, child->result.out);
    child->readInto(child->err, child->bufErr, child->result.err);
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
