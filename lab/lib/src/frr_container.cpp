// The lab's FRR containers (frr_container.h).
#include "twinrail/lab/frr_container.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace twinrail::lab {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr const char* kImage = "twinrail-lab-frr:1";
constexpr const char* kStartScript = "twinrail-frr-start.sh";

std::string etcDir(const std::string& ns) {
    return "/etc/frr/" + ns;
}
// Host-side: the start log and the ready mark the container writes (/twinrail-run inside).
std::string runDir(const std::string& ns) {
    return "/var/run/frr/" + ns;
}

std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// An empty root for the container: the host's /usr and /etc are mounted over it, and the
// merged-usr links (/bin -> usr/bin ...) are made as the host has them.
void ensureImage() {
    if (run({"docker", "image", "inspect", kImage}).rc == 0) return;
    char tmpl[] = "/tmp/twinrail-frr-root-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("cannot make a temp folder");
    const fs::path root = tmpl;
    for (const char* d :
         {"usr", "etc", "run", "tmp", "proc", "sys", "dev", "var/tmp", "var/log", "twinrail-run"})
        fs::create_directories(root / d);
    fs::create_directory_symlink("../run", root / "var/run");
    for (const char* link : {"bin", "sbin", "lib", "lib64"}) {
        std::error_code ec;
        if (fs::is_symlink(fs::path("/") / link, ec))
            fs::create_directory_symlink(fs::read_symlink(fs::path("/") / link), root / link);
    }
    const std::string tar = root.string() + ".tar";
    runOk({"tar", "-C", root.string(), "-cf", tar, "."});
    auto r = run({"docker", "import", tar, kImage});
    fs::remove_all(root);
    fs::remove(tar);
    if (r.rc != 0) throw std::runtime_error("docker import of the lab's FRR image: " + r.out);
}

// docker-fpm-frr's supervisord, in the lab: zebra and bgpd (and staticd) with the release's
// vty options, then `vtysh -b` (the split-unified frr.conf), then a mark the lab waits for.
std::string startScript(const std::string& ns, bool bgpdVtyPort) {
    const std::string closed = bgpdVtyPort ? "" : " -P 0";
    return "#!/bin/sh\n"
           "# Written by twinrail-lab: FRR of " +
           ns +
           " as SONiC's bgp container starts it.\n"
           "rm -f /twinrail-run/ready\n"
           "exec nsenter --net=/var/run/netns/" +
           ns +
           " /bin/sh -c '\n"
           "set -e\n"
           "/usr/lib/frr/zebra -d -F datacenter -A 127.0.0.1 -s 90000000 "
           "--log file:/twinrail-run/zebra.log\n"
           "/usr/lib/frr/bgpd -d -F datacenter -A 127.0.0.1" +
           closed +
           " --log file:/twinrail-run/bgpd.log\n"
           "/usr/lib/frr/staticd -d -F datacenter -A 127.0.0.1" +
           closed +
           " --log file:/twinrail-run/staticd.log\n"
           "vtysh -b\n"
           "touch /twinrail-run/ready\n"
           "exec sleep infinity'\n";
}

void waitReady(const std::string& ns) {
    const std::string ready = runDir(ns) + "/ready";
    const std::string name = frrContainerName(ns);
    auto up = [&ready] { return fs::exists(ready); };
    if (waitUntil(up, 30s, 50ms)) return;
    auto logs = run({"docker", "logs", "--tail", "30", name});
    throw std::runtime_error("FRR container " + name + " did not load its configuration:\n" +
                             logs.out + readFile(runDir(ns) + "/bgpd.log"));
}

std::string ownerIds(const char* user, const char* group) {
    const struct passwd* pw = ::getpwnam(user);
    const struct group* gr = ::getgrnam(group);
    if (pw == nullptr || gr == nullptr) throw std::runtime_error("no frr user or group");
    return "uid=" + std::to_string(pw->pw_uid) + ",gid=" + std::to_string(gr->gr_gid);
}

}  // namespace

std::string frrContainerName(const std::string& ns) {
    return ns + "-bgp";
}

bool frrInContainer(const std::string& ns) {
    return fs::exists(etcDir(ns) + "/" + kStartScript);
}

void startFrrContainer(const std::string& ns, const std::string& frrConf, bool bgpdVtyPort) {
    ensureImage();
    const std::string etc = etcDir(ns);
    const std::string host = runDir(ns);
    fs::create_directories(etc);
    fs::create_directories(host);
    std::ofstream(etc + "/frr.conf") << frrConf;
    std::ofstream(etc + "/vtysh.conf") << "service integrated-vtysh-config\n";
    std::ofstream(etc + "/" + kStartScript) << startScript(ns, bgpdVtyPort);
    runOk({"chown", "-R", "frr:frr", etc, host});
    fs::remove(host + "/ready");
    removeFrrContainers({ns});
    runOk({"docker",
           "run",
           "--detach",
           "--name",
           frrContainerName(ns),
           "--network",
           "none",
           "--cap-add",
           "NET_ADMIN",
           "--cap-add",
           "SYS_ADMIN",
           "--volume",
           "/usr:/usr:ro",
           "--volume",
           "/etc:/etc:ro",
           "--volume",
           etc + ":/etc/frr",
           "--volume",
           "/var/run/netns:/var/run/netns:ro",
           "--volume",
           host + ":/twinrail-run",
           "--tmpfs",
           "/var/run/frr:" + ownerIds("frr", "frr") + ",mode=0755",
           kImage,
           "/bin/sh",
           "/etc/frr/" + std::string(kStartScript)});
    waitReady(ns);
}

void restartFrrContainer(const std::string& ns) {
    fs::remove(runDir(ns) + "/ready");
    runOk({"docker", "restart", "--time", "2", frrContainerName(ns)});
    waitReady(ns);
}

void removeFrrContainers(const std::vector<std::string>& namespaces) {
    if (namespaces.empty()) return;
    Argv argv{"docker", "rm", "--force"};
    for (const auto& ns : namespaces) argv.push_back(frrContainerName(ns));
    run(argv);  // a container already gone is not an error here
}

Argv vtyshFor(const std::string& ns) {
    if (frrInContainer(ns)) return {"docker", "exec", frrContainerName(ns), "vtysh"};
    return {"vtysh", "-N", ns};
}

}  // namespace twinrail::lab
