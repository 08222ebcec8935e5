// Writes every UDP datagram that arrives on a port as one fuzz seed:
//   capture_udp --port P --out DIR [--count N] [--seconds S]
// Listens on [::]:P (IPv4 too) until N datagrams or S seconds (defaults 64 and 10).
// Used for the INT collector's seeds: run it in a lab namespace, send reports at it.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    int port = 0, count = 64, seconds = 10;
    std::string dir;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string a = argv[i];
        if (a == "--port") {
            port = std::atoi(argv[i + 1]);
        } else if (a == "--out") {
            dir = argv[i + 1];
        } else if (a == "--count") {
            count = std::atoi(argv[i + 1]);
        } else if (a == "--seconds") {
            seconds = std::atoi(argv[i + 1]);
        }
    }
    if (port <= 0 || port > 65535 || dir.empty()) {
        std::fprintf(stderr, "usage: capture_udp --port P --out DIR [--count N] [--seconds S]\n");
        return 64;
    }
    int fd = ::socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int off = 0;
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_port = htons(static_cast<uint16_t>(port));
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0) {
        std::fprintf(stderr, "capture_udp: bind port %d: %s\n", port, std::strerror(errno));
        return 1;
    }
    std::printf("listening on %d\n", port);
    std::fflush(stdout);
    std::vector<char> buf(65536);
    int got = 0;
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (got < count && std::chrono::steady_clock::now() < end) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0) continue;
        ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
        if (n < 0) continue;
        char name[32];
        std::snprintf(name, sizeof name, "/udp-%03d.bin", got++);
        std::ofstream(dir + name, std::ios::binary).write(buf.data(), n);
    }
    ::close(fd);
    std::printf("%d datagrams in %s\n", got, dir.c_str());
    return 0;
}
