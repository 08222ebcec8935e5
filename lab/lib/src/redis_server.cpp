#include "twinrail/lab/redis_server.h"

#include <filesystem>

namespace twinrail::lab {

RedisServer::RedisServer(std::string dir) : dir_(std::move(dir)), socket_(dir_ + "/redis.sock") {
    std::filesystem::create_directories(dir_);
}

RedisServer::~RedisServer() {
    stop();
}

void RedisServer::start() {
    std::filesystem::remove(socket_);
    process_ = ChildProcess(
        {"redis-server", "--port", "0", "--unixsocket", socket_, "--unixsocketperm", "700",
         "--save", "", "--appendonly", "no", "--dir", dir_, "--databases", "16"},
        dir_ + "/redis.log");
    if (!waitUntil([this] { return cli(0, {"PING"}).find("PONG") != std::string::npos; },
                   std::chrono::seconds(10)))
        throw std::runtime_error("redis-server did not start; see " + dir_ + "/redis.log");
}

void RedisServer::stop() {
    process_.stop();
    std::filesystem::remove(socket_);
}

std::string RedisServer::cli(int db, const Argv& args) const {
    Argv argv{"redis-cli", "-s", socket_, "-n", std::to_string(db)};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv).out;
}

}  // namespace twinrail::lab
