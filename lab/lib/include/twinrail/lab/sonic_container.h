// The SONiC package's own container (packaging/sonic, scripts/sonic-package.sh's image) on a
// lab switch in SONiC's layout: hostrouted and pathqd as sonic-package-manager runs them,
// from the image's entrypoint and supervisord, instead of the host's binaries. What a
// switch gives the container, the lab gives it: the Redis socket and database_config.json
// at /var/run/redis, the Docker socket (the daemons reach FRR in the switch's bgp
// container through it). Where the lab differs, and why:
// - SONiC runs the container with the host's network; the lab's switch is a namespace, so
//   the entrypoint starts through nsenter into it;
// - --privileged needs CAP_SYS_RESOURCE, which this machine's root lacks: the container
//   gets every other capability and no seccomp filter instead;
// - TWINRAIL_FRR_CONTAINER names the switch's FRR container (on a switch: bgp).
#pragma once

#include <string>
#include <vector>

namespace twinrail::lab {

std::string twinrailContainerName(const std::string& lab, const std::string& node);
// Starts the package's container `image` on `node` (its host daemons must be stopped
// first); throws std::runtime_error with the container's log when it does not start.
// `yangModels`: the folder given to it as the switch's /usr/local/yang-models (the
// manifest mounts the switch's own there), or none.
void startTwinrailContainer(const std::string& lab, const std::string& node,
                            const std::string& image, const std::string& yangModels = "");
// `docker stop` (SIGTERM to supervisord, which stops the daemons), then removes it;
// returns the container's exit code (0: a clean stop).
int stopTwinrailContainer(const std::string& lab, const std::string& node);
// Every container of a lab (FRR's and the package's), by the lab's namespace prefix.
std::vector<std::string> labContainers(const std::string& nsPrefix);

}  // namespace twinrail::lab
