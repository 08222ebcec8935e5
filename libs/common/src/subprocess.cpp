#include "twinrail/common/subprocess.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

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

// The capabilities the child may keep, as the kernel's bit mask.
uint64_t capabilityMask(const std::vector<Capability>& caps) {
    uint64_t mask = 0;
    for (Capability c : caps) {
        switch (c) {
            case Capability::NetAdmin:
                mask |= uint64_t{1} << CAP_NET_ADMIN;
                break;
            case Capability::NetRaw:
                mask |= uint64_t{1} << CAP_NET_RAW;
                break;
        }
    }
    return mask;
}

// What posix_spawnp() did with PATH, done before fork(): the child may only make
// async-signal-safe calls, and a PATH search allocates.
std::string resolve(const std::string& program) {
    if (program.find('/') != std::string::npos) return program;
    const char* env = ::getenv("PATH");
    std::string_view dirs = env != nullptr ? env : "/usr/local/bin:/usr/bin:/bin";
    while (true) {
        size_t colon = dirs.find(':');
        std::string_view dir = dirs.substr(0, colon);
        std::string candidate = (dir.empty() ? std::string(".") : std::string(dir)) + "/" + program;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
        // Not "program" itself, which execve() would look for in the working directory.
        if (colon == std::string_view::npos) return "";  // execve("") fails with ENOENT
        dirs.remove_prefix(colon + 1);
    }
}

// Everything the child needs, prepared before fork().
struct ChildPlan {
    const char* path;
    char* const* argv;
    int out;
    int err;
    uint64_t keep;  // capabilities to hand over (CAP_* bits)
    sigset_t mask;  // the parent thread's signal mask, restored just before exec
    int report;     // write end of the pipe that tells the parent why exec did not happen
};

// Why the child did not exec, sent to the parent.
struct ChildFailure {
    int dropping = 0;  // 1: while setting its capabilities, 0: exec itself
    int error = 0;
};

// Leaves the calling thread with ambient and inheritable sets of exactly `keep` (bits the
// thread does not have in its permitted set are left out): exec then gives an unprivileged
// program exactly these. Raw syscalls only (no libcap): it runs between fork and exec.
// 0 or an errno.
int setChildCapabilities(uint64_t keep) {
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
        return errno;  // EINVAL: a kernel before 4.3 has no ambient set to clear
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    if (::syscall(SYS_capget, &header, data) != 0) return errno;
    auto join = [](uint32_t low, uint32_t high) { return low | (uint64_t{high} << 32); };
    keep &= join(data[0].permitted, data[1].permitted);
    // Only when it changes: the units' system call filter may refuse capset(), and a
    // daemon without capabilities (pathqd) has nothing to drop.
    if (join(data[0].inheritable, data[1].inheritable) != keep) {
        data[0].inheritable = static_cast<uint32_t>(keep);
        data[1].inheritable = static_cast<uint32_t>(keep >> 32);
        if (::syscall(SYS_capset, &header, data) != 0) return errno;
    }
    for (unsigned long cap = 0; cap < 64; ++cap) {
        if ((keep & (uint64_t{1} << cap)) == 0) continue;
        if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) != 0) return errno;
    }
    return 0;
}

// Runs in the child of fork(), so async-signal-safe calls only; never returns.
[[noreturn]] void execChild(const ChildPlan& plan) {
    // The parent's handlers would run in this copy until exec (and could write to its
    // wake-up pipes): default them, as posix_spawn() does, before unblocking.
    for (int sig = 1; sig < NSIG; ++sig) {
        struct sigaction sa {};
        if (::sigaction(sig, nullptr, &sa) != 0) continue;
        if (sa.sa_handler == SIG_IGN || sa.sa_handler == SIG_DFL) continue;
        sa = {};
        sa.sa_handler = SIG_DFL;
        ::sigaction(sig, &sa, nullptr);
    }
    ::sigprocmask(SIG_SETMASK, &plan.mask, nullptr);
    ChildFailure failure;
    int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);  // dup2() clears it on 0
    if (in < 0 || ::dup2(in, STDIN_FILENO) < 0 || ::dup2(plan.out, STDOUT_FILENO) < 0 ||
        ::dup2(plan.err, STDERR_FILENO) < 0) {
        failure.error = errno;
    } else if (int e = setChildCapabilities(plan.keep); e != 0) {
        failure = {1, e};
    } else {
        ::execve(plan.path, plan.argv, environ);
        failure.error = errno;
    }
    ssize_t unused = ::write(plan.report, &failure, sizeof failure);
    (void)unused;
    ::_exit(127);
}

// Returns the pid, or -1 with `error` set to why.
pid_t spawn(const std::vector<std::string>& argv, const Outputs& o, const ProcessOptions& options,
            std::string& error) {
    // fork() and not posix_spawn(): only the child can shed its capabilities before exec.
    std::string path = resolve(argv.front());
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int report[2];
    if (::pipe2(report, O_CLOEXEC) != 0) {
        error = std::string("pipe: ") + std::strerror(errno);
        return -1;
    }
    ChildPlan plan{.path = path.c_str(),
                   .argv = args.data(),
                   .out = o.out,
                   .err = o.err,
                   .keep = capabilityMask(options.keepCapabilities),
                   .mask = {},
                   .report = report[1]};
    // No signal handler may run in the child before it has defaulted them.
    sigset_t all;
    ::sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &plan.mask);
    pid_t pid = ::fork();
    if (pid == 0) execChild(plan);
    int forkError = errno;
    ::pthread_sigmask(SIG_SETMASK, &plan.mask, nullptr);
    ::close(report[1]);
    if (pid < 0) {
        ::close(report[0]);
        error = std::string("fork: ") + std::strerror(forkError);
        return -1;
    }
    // End of file (the pipe closed on exec) means the program runs.
    ChildFailure failure;
    ssize_t n;
    do {
        n = ::read(report[0], &failure, sizeof failure);
    } while (n < 0 && errno == EINTR);
    ::close(report[0]);
    if (n != static_cast<ssize_t>(sizeof failure)) return pid;
    ::waitpid(pid, nullptr, 0);
    error = std::string(failure.dropping != 0 ? "cannot drop capabilities: " : "") +
            std::strerror(failure.error);
    return -1;
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
    runProcess(io, std::move(argv), timeout, ProcessOptions{}, std::move(done));
}

void runProcess(boost::asio::io_context& io, std::vector<std::string> argv,
                std::chrono::milliseconds timeout, const ProcessOptions& options,
                ProcessCallback done) {
    if (argv.empty()) return failLater(io, std::move(done), "no program to run");
    Outputs o;
    o.out = ::memfd_create("child-stdout", MFD_CLOEXEC);
    o.err = ::memfd_create("child-stderr", MFD_CLOEXEC);
    if (o.out < 0 || o.err < 0)
        return failLater(io, std::move(done), std::string("memfd: ") + std::strerror(errno));
    std::string error;
    pid_t pid = spawn(argv, o, options, error);
    if (pid < 0)
        return failLater(io, std::move(done), "cannot start " + argv.front() + ": " + error);
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
                             std::chrono::milliseconds timeout, const ProcessOptions& options) {
    boost::asio::io_context io;
    ProcessResult result;
    runProcess(io, argv, timeout, options, [&result](ProcessResult r) { result = std::move(r); });
    io.run();
    return result;
}

}  // namespace twinrail
