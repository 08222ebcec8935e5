// FRR through the Docker Engine API (libs/frr docker_stream.h, docker_channel.h): the
// multiplexed output of an exec, the request bodies, the answers and events, the names and
// options checked before anything is sent. Bytes and strings only: no Docker, no root (the
// real engine is frr_docker_it).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "twinrail/frr/access.h"
#include "twinrail/frr/docker_channel.h"
#include "twinrail/frr/docker_stream.h"

namespace docker = twinrail::frr::docker;
namespace frr = twinrail::frr;
using nlohmann::json;

namespace {

std::string frame(int stream, const std::string& payload) {
    std::string h(8, '\0');
    h[0] = static_cast<char>(stream);
    const auto n = static_cast<uint32_t>(payload.size());
    h[4] = static_cast<char>(n >> 24);
    h[5] = static_cast<char>(n >> 16);
    h[6] = static_cast<char>(n >> 8);
    h[7] = static_cast<char>(n);
    return h + payload;
}

}  // namespace

// What dockerd sent for `echo hi; echo err >&2` (seen on the wire with Docker 20.10).
TEST(DockerStream, DemuxesStdoutAndStderrFedInAnyPieces) {
    const std::string wire = frame(1, "hi\n") + frame(2, "err\n") + frame(1, "") + frame(1, "x");
    for (size_t piece : {1UL, 3UL, 7UL, 8UL, 9UL, wire.size()}) {
        docker::StreamDemux d(1024);
        for (size_t at = 0; at < wire.size(); at += piece) d.feed(wire.substr(at, piece));
        d.finish();
        EXPECT_FALSE(d.error()) << piece << ": " << *d.error();
        EXPECT_EQ(d.out(), "hi\nx") << piece;
        EXPECT_EQ(d.err(), "err\n") << piece;
    }
}

TEST(DockerStream, MalformedOrRunawayOutputIsAnErrorNotMemory) {
    docker::StreamDemux badStream(1024);
    badStream.feed(frame(3, "x"));
    ASSERT_TRUE(badStream.error());
    EXPECT_NE(badStream.error()->find("not stdout or stderr"), std::string::npos);
    docker::StreamDemux badPad(1024);
    std::string f = frame(1, "x");
    f[2] = 1;
    badPad.feed(f);
    EXPECT_TRUE(badPad.error());
    docker::StreamDemux cut(1024);
    cut.feed(frame(1, "hello").substr(0, 10));
    cut.finish();
    ASSERT_TRUE(cut.error());
    EXPECT_NE(cut.error()->find("inside a frame"), std::string::npos);
    // A frame that claims 4 GB: refused when its bytes pass the bound, never allocated.
    docker::StreamDemux big(16);
    std::string huge(8, '\0');
    huge[0] = 1;
    huge[4] = huge[5] = huge[6] = huge[7] = static_cast<char>(0xff);
    big.feed(huge + std::string(17, 'a'));
    ASSERT_TRUE(big.error());
    EXPECT_NE(big.error()->find("more than 16 bytes"), std::string::npos);
    EXPECT_LE(big.out().size(), 16U);
    big.feed(frame(1, "later"));  // ignored after the error
    EXPECT_LE(big.out().size(), 16U);
}

TEST(DockerStream, RequestBodiesAndAnswers) {
    auto body = json::parse(docker::execCreateBody({"vtysh", "-c", "show version"}));
    EXPECT_EQ(body["Cmd"], json({"vtysh", "-c", "show version"}));
    EXPECT_EQ(body["AttachStdout"], true);
    EXPECT_EQ(body["AttachStdin"], false);
    EXPECT_EQ(body["Tty"], false);
    EXPECT_FALSE(body.contains("User"));
    EXPECT_EQ(json::parse(docker::execCreateBody({"x"}, "frr"))["User"], "frr");
    EXPECT_EQ(json::parse(docker::execStartBody()), json({{"Detach", false}, {"Tty", false}}));
    std::string why;
    EXPECT_EQ(docker::execIdOf(R"({"Id":"7e5e0a45b09d"})", why), "7e5e0a45b09d");
    for (const char* bad : {R"({"Id":"../x"})", R"({"Id":3})", "{}", "[", "not json"}) {
        why.clear();
        EXPECT_FALSE(docker::execIdOf(bad, why)) << bad;
        EXPECT_FALSE(why.empty()) << bad;
    }
    auto state = docker::execStateOf(R"({"Running":false,"ExitCode":3,"Pid":9})", why);
    ASSERT_TRUE(state);
    EXPECT_FALSE(state->running);
    EXPECT_EQ(state->exitCode, 3);
    EXPECT_FALSE(docker::execStateOf(R"({"Running":"no","ExitCode":3})", why));
    EXPECT_EQ(docker::errorMessageOf(R"({"message":"No such container: bgp"})"),
              "No such container: bgp");
    EXPECT_EQ(docker::errorMessageOf("plain\x01text"), "plain\\x01text");
}

TEST(DockerStream, OnlyTheWatchedContainersStartIsAnEvent) {
    const std::string start =
        R"({"status":"start","Type":"container","Action":"start","Actor":{"ID":"ab","Attributes":{"name":"bgp"}}})";
    EXPECT_TRUE(docker::isStartEvent(start, "bgp"));
    EXPECT_FALSE(docker::isStartEvent(start, "bgp2"));
    EXPECT_FALSE(docker::isStartEvent(
        R"({"Type":"container","Action":"die","Actor":{"Attributes":{"name":"bgp"}}})", "bgp"));
    EXPECT_FALSE(docker::isStartEvent(R"({"Type":"container","Action":"start"})", "bgp"));
    EXPECT_FALSE(docker::isStartEvent("garbage", "bgp"));
    const std::string path = docker::startEventsPath("bgp");
    EXPECT_EQ(path.find(' '), std::string::npos);
    EXPECT_NE(path.find("%22bgp%22"), std::string::npos);
}

TEST(DockerFrrOptions, CheckedBeforeAnythingIsSent) {
    EXPECT_FALSE(docker::checkContainerName("bgp"));
    EXPECT_FALSE(docker::checkContainerName("trl-lab1-p1-leaf1-bgp"));
    for (const char* bad : {"", "-bgp", "bgp/../x", "bgp x", "bgp?a=1", "bgp\n"})
        EXPECT_TRUE(docker::checkContainerName(bad)) << bad;
    EXPECT_TRUE(docker::checkContainerName(std::string(129, 'a')));
    frr::DockerFrrOptions o;
    EXPECT_FALSE(frr::checkDockerFrrOptions(o));
    o.socket = "docker.sock";
    ASSERT_TRUE(frr::checkDockerFrrOptions(o));
    EXPECT_NE(frr::checkDockerFrrOptions(o)->find("an absolute path"), std::string::npos);
    o = {};
    o.container = "../bgp";
    EXPECT_NE(frr::checkDockerFrrOptions(o)->find("--frr-container \"../bgp\""), std::string::npos);
    EXPECT_EQ(frr::parseAccessKind("docker"), frr::Access::Kind::Docker);
    EXPECT_EQ(frr::parseAccessKind("vtysh"), frr::Access::Kind::Vtysh);
    EXPECT_EQ(frr::parseAccessKind("vty-tcp"), std::nullopt);
}
