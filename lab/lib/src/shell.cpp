#include "twinrail/lab/shell.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "twinrail/common/names.h"
#include "twinrail/common/subprocess.h"

namespace twinrail::lab {
namespace {

bool scriptChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("-_./:=,+@%").find(c) != std::string_view::npos;
}

// PATH lookup before fork(): the child of a threaded process may only call
// async-signal-safe functions, and execvp() is not one.
std::string resolve(const std::string& program) {
    if (program.find('/') != std::string::npos) return program;
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path != nullptr ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
    for (std::string dir; std::getline(dirs, dir, ':');) {
        std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
        if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return program;  // execve() will say ENOENT
}

}  // namespace

ShellResult run(const Argv& argv, std::chrono::milliseconds timeout) {
    auto r = runProcessSync(argv, timeout);
    return ShellResult{r.exitCode, std::move(r.out), std::move(r.err)};
}

std::string runOk(const Argv& argv, std::chrono::milliseconds timeout) {
    auto r = run(argv, timeout);
    if (r.rc != 0) {
        throw std::runtime_error("command failed (rc " + std::to_string(r.rc) +
                                 "): " + describe(argv) + "\n" + r.err + r.out);
    }
    return r.out;
}

Argv inNamespace(const std::string& ns, const Argv& argv) {
    Argv out{"ip", "netns", "exec", ns};
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
}

ShellResult runAll(const std::vector<Argv>& commands, bool stopOnError) {
    ShellResult all{0, "", ""};
    for (const auto& argv : commands) {
        auto r = run(argv);
        all.out += r.out;
        all.err += r.err;
        all.rc = r.rc;
        if (r.rc != 0 && stopOnError) {
            all.err += "failed (rc " + std::to_string(r.rc) + "): " + describe(argv) + "\n";
            break;
        }
    }
    return all;
}

std::string describe(const Argv& argv) {
    std::string line;
    for (const auto& a : argv) line += (line.empty() ? "" : " ") + names::printable(a, 200);
    return line;
}

Argv scriptWords(std::string_view line) {
    Argv words;
    std::string word;
    for (size_t i = 0; i < line.size(); ++i) {
        char c = line[i];
        if (c == ' ') {
            if (!word.empty()) words.push_back(std::move(word));
            word.clear();
        } else if (scriptChar(c)) {
            word += c;
        } else {
            throw std::invalid_argument(
                "script line \"" + names::printable(line, 200) + "\": character \"" +
                names::printable(std::string_view(&line[i], 1)) + "\" at offset " +
                std::to_string(i) + " needs a shell; refused");
        }
    }
    if (!word.empty()) words.push_back(std::move(word));
    return words;
}

std::vector<Argv> scriptCommands(std::string_view script) {
    std::vector<Argv> out;
    for (size_t at = 0; at <= script.size();) {
        size_t nl = script.find('\n', at);
        if (nl == std::string_view::npos) nl = script.size();
        std::string_view line = script.substr(at, nl - at);
        at = nl + 1;
        auto first = line.find_first_not_of(' ');
        if (first == std::string_view::npos || line[first] == '#') continue;
        Argv words = scriptWords(line);
        if (words == Argv{"set", "-e"}) continue;
        out.push_back(std::move(words));
    }
    return out;
}

pid_t spawnDetached(const Argv& argv, const std::string& logPath) {
    if (argv.empty()) throw std::invalid_argument("spawnDetached: no command");
    // Everything the children need is made here: between fork() and exec() they only call
    // async-signal-safe functions.
    const std::string program = resolve(argv[0]);
    std::vector<std::string> copy = argv;
    std::vector<char*> args;
    args.reserve(copy.size() + 1);
    for (auto& a : copy) args.push_back(a.data());
    args.push_back(nullptr);
    int logFd = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    int nullFd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    int report[2] = {-1, -1};
    if (logFd < 0 || nullFd < 0 || ::pipe2(report, O_CLOEXEC) != 0) {
        int e = errno;
        for (int fd : {logFd, nullFd})
            if (fd >= 0) ::close(fd);
        throw std::runtime_error("cannot start " + argv[0] + ": " + logPath + ": " +
                                 std::strerror(e));
    }
    pid_t child = ::fork();
    if (child == 0) {
        ::setsid();
        pid_t grandchild = ::fork();
        if (grandchild == 0) {
            sigset_t none;
            sigemptyset(&none);
            ::sigprocmask(SIG_SETMASK, &none, nullptr);
            ::dup2(nullFd, STDIN_FILENO);
            ::dup2(logFd, STDOUT_FILENO);
            ::dup2(logFd, STDERR_FILENO);
            ::execve(program.c_str(), args.data(), environ);
            static const char kMsg[] = "spawnDetached: cannot exec the program\n";
            (void)!::write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
            ::_exit(127);
        }
        (void)!::write(report[1], &grandchild, sizeof grandchild);
        ::_exit(grandchild > 0 ? 0 : 1);
    }
    ::close(report[1]);
    ::close(logFd);
    ::close(nullFd);
    pid_t pid = -1;
    if (child > 0) {
        if (::read(report[0], &pid, sizeof pid) != static_cast<ssize_t>(sizeof pid)) pid = -1;
        ::waitpid(child, nullptr, 0);
    }
    ::close(report[0]);
    if (pid <= 0) throw std::runtime_error("cannot start " + describe(argv));
    return pid;
}

bool waitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout,
               std::chrono::milliseconds step) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        if (done()) return true;
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(step);
    }
}

std::string uniquePrefix(const std::string& base) {
    // Interface names are capped at 15 characters; keep the prefix short.
    static const char* kDigits = "0123456789abcdefghijklmnopqrstuvwxyz";
    std::string id;
    for (auto pid = static_cast<unsigned>(getpid()); pid > 0; pid /= 36) id += kDigits[pid % 36];
    return base + id;
}

}  // namespace twinrail::lab
