// The SONiC package's container on a lab switch (sonic_container.h).
#include "twinrail/lab/sonic_container.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "twinrail/lab/frr_container.h"
#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/shell.h"
#include "twinrail/lab/sonic_layout.h"

namespace twinrail::lab {
namespace fs = std::filesystem;

std::string twinrailContainerName(const std::string& lab, const std::string& node) {
    return PlanLab::nsPrefix(lab) + node + "-twinrail";
}

void startTwinrailContainer(const std::string& lab, const std::string& node,
                            const std::string& image, const std::string& yangModels) {
    const std::string d = PlanLab::stateDir(lab) + "/" + node;
    const std::string ns = PlanLab::nsPrefix(lab) + node;
    // SONiC's /var/run/redis as the container sees it: the socket, and a
    // database_config.json that names it where the container has it.
    fs::create_directories(d + "/container-sonic-db");
    std::ofstream(d + "/container-sonic-db/database_config.json")
        << labDatabaseConfig("/var/run/redis/redis.sock").dump(2) << "\n";
    const std::string name = twinrailContainerName(lab, node);
    run({"docker", "rm", "--force", name});
    Argv argv{"docker",
              "run",
              "--detach",
              "--name",
              name,
              "--network",
              "none",
              "--cap-add",
              "ALL",
              "--cap-drop",
              "SYS_RESOURCE",
              "--security-opt",
              "seccomp=unconfined"};
    for (const std::string& volume : {d + "/redis.sock:/var/run/redis/redis.sock",
                                      d + "/container-sonic-db:/var/run/redis/sonic-db:ro",
                                      std::string("/var/run/docker.sock:/var/run/docker.sock"),
                                      std::string("/var/run/netns:/var/run/netns:ro")})
        argv.insert(argv.end(), {"--volume", volume});
    if (!yangModels.empty())
        argv.insert(argv.end(), {"--volume", yangModels + ":/usr/local/yang-models:ro"});
    argv.insert(argv.end(), {"--env", "TWINRAIL_FRR_CONTAINER=" + frrContainerName(ns),
                             "--entrypoint", "/usr/bin/nsenter", image,
                             "--net=/var/run/netns/" + ns, "/usr/bin/twinrail-entrypoint"});
    auto r = run(argv);
    if (r.rc != 0) throw std::runtime_error("docker run " + image + " on " + node + ": " + r.out);
    auto running = [&name] {
        auto s = run({"docker", "exec", name, "supervisorctl", "status"});
        return s.out.find("hostrouted") != std::string::npos &&
               s.out.find("pathqd") != std::string::npos &&
               s.out.find("STARTING") == std::string::npos &&
               s.out.find("BACKOFF") == std::string::npos;
    };
    if (!waitUntil(running, std::chrono::seconds(30), std::chrono::milliseconds(500))) {
        throw std::runtime_error("the package's container on " + node +
                                 " did not run both daemons:\n" +
                                 run({"docker", "logs", "--tail", "40", name}).out);
    }
}

int stopTwinrailContainer(const std::string& lab, const std::string& node) {
    const std::string name = twinrailContainerName(lab, node);
    run({"docker", "stop", "--time", "20", name});
    auto code = run({"docker", "inspect", "--format", "{{.State.ExitCode}}", name});
    run({"docker", "rm", "--force", name});
    try {
        return std::stoi(code.out);
    } catch (const std::exception&) {
        return -1;
    }
}

std::vector<std::string> labContainers(const std::string& nsPrefix) {
    std::vector<std::string> out;
    auto r = run({"docker", "ps", "--all", "--format", "{{.Names}}"});
    std::istringstream in(r.out);
    for (std::string name; std::getline(in, name);)
        if (name.rfind(nsPrefix, 0) == 0) out.push_back(name);
    return out;
}

}  // namespace twinrail::lab
