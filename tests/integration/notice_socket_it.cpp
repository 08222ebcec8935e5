// The fast-notice socket (twinrail/fnn/udp_socket.h) that planesteer and hostrouted use, against
// the kernel, in a network namespace of this test's own (unshare: nothing outside sees it): what
// the unit tests' fake hands the daemon, a real UDP socket hands it too. Each datagram comes with
// its source and the local address it was sent to, which picks the bond's key; a datagram longer
// than any notice comes up longer still, for the parser to refuse; a burst is drained without
// blocking the loop.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <vector>

#include "twinrail/fnn/udp_socket.h"
#include "twinrail/lab/shell.h"

namespace twinrail::fnn {
namespace {

using namespace std::chrono_literals;

class NoticeSocketIt : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        ASSERT_EQ(::unshare(CLONE_NEWNET), 0) << "needs root (CAP_SYS_ADMIN)";
        ASSERT_EQ(lab::run({"ip", "link", "set", "lo", "up"}).rc, 0);
    }
    // One datagram from `from` to `to`:port, through the kernel.
    static void send(const char* from, const char* to, uint16_t port, size_t size) {
        int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
        ASSERT_GE(fd, 0);
        sockaddr_in src{};
        src.sin_family = AF_INET;
        ::inet_pton(AF_INET, from, &src.sin_addr);
        ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src), 0);
        sockaddr_in dst{};
        dst.sin_family = AF_INET;
        dst.sin_port = htons(port);
        ::inet_pton(AF_INET, to, &dst.sin_addr);
        std::vector<uint8_t> bytes(size, 0x5a);
        EXPECT_EQ(::sendto(fd, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&dst),
                           sizeof dst),
                  static_cast<ssize_t>(size));
        ::close(fd);
    }
    void runUntil(size_t n) {
        auto limit = std::chrono::steady_clock::now() + 5s;
        while (got.size() < n && std::chrono::steady_clock::now() < limit) {
            io.restart();
            io.run_for(10ms);
        }
    }
    boost::asio::io_context io;
    std::vector<Datagram> got;
};

TEST_F(NoticeSocketIt, HandsUpEachDatagramWithItsSourceAndDestination) {
    UdpNoticeSocket socket(io, std::nullopt, 7430, [this](const Datagram& d) { got.push_back(d); });
    send("127.0.0.2", "127.0.0.3", 7430, 116);
    send("127.0.0.4", "127.0.0.5", 7430, 80);
    runUntil(2);
    ASSERT_EQ(got.size(), 2U);
    EXPECT_EQ(got[0].source.str(), "127.0.0.2");
    EXPECT_EQ(got[0].destination.str(), "127.0.0.3");
    EXPECT_EQ(got[0].bytes, std::vector<uint8_t>(116, 0x5a));
    EXPECT_EQ(got[1].destination.str(), "127.0.0.5");
}

TEST_F(NoticeSocketIt, ALongDatagramComesUpLongerThanAnyNoticeAndABurstIsDrained) {
    UdpNoticeSocket socket(io, std::nullopt, 7431, [this](const Datagram& d) { got.push_back(d); });
    send("127.0.0.2", "127.0.0.3", 7431, 3000);
    for (int i = 0; i < 500; ++i) send("127.0.0.2", "127.0.0.3", 7431, 100);
    runUntil(501);
    ASSERT_EQ(got.size(), 501U);
    EXPECT_GT(got[0].bytes.size(), 2048U);
}

// A switch's socket: bound to its loopback, it sends from it, and hears what is sent to it.
TEST_F(NoticeSocketIt, BoundToOneAddressItSendsFromItAndHearsOnlyIt) {
    std::vector<Datagram> other;
    UdpNoticeSocket leaf(io, *IpAddr::parse("127.0.0.7"), 7433,
                         [this](const Datagram& d) { got.push_back(d); });
    UdpNoticeSocket server(io, std::nullopt, 7434,
                           [&other](const Datagram& d) { other.push_back(d); });
    const std::vector<uint8_t> bytes(90, 0x11);
    EXPECT_TRUE(leaf.send(*IpAddr::parse("127.0.0.9"), 7434, bytes));
    send("127.0.0.2", "127.0.0.7", 7433, 60);
    auto limit = std::chrono::steady_clock::now() + 5s;
    while ((other.empty() || got.empty()) && std::chrono::steady_clock::now() < limit) {
        io.restart();
        io.run_for(10ms);
    }
    ASSERT_EQ(other.size(), 1U);
    EXPECT_EQ(other[0].source.str(), "127.0.0.7");
    EXPECT_EQ(other[0].destination.str(), "127.0.0.9");
    EXPECT_EQ(other[0].bytes, bytes);
    ASSERT_EQ(got.size(), 1U);
    EXPECT_EQ(got[0].destination.str(), "127.0.0.7");
    EXPECT_EQ(leaf.sendErrors(), 0U);
}

TEST_F(NoticeSocketIt, APortInUseIsAClearError) {
    UdpNoticeSocket first(io, std::nullopt, 7432, [](const Datagram&) {});
    try {
        UdpNoticeSocket second(io, std::nullopt, 7432, [](const Datagram&) {});
        FAIL() << "bound the same port twice";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("UDP port 7432"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace twinrail::fnn
