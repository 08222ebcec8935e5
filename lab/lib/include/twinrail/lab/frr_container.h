// FRR in a container of its own, as a SONiC switch runs it (docker-fpm-frr, container
// `bgp`): for the lab's SONiC layout. The daemons that reach it do so the way they do on
// SONiC, through the Docker Engine API (vtysh in the container); its vty unix sockets are
// in the container's own /var/run/frr, invisible from the switch, and bgpd's vty TCP port
// is closed where the release closes it (-P 0 from 202505).
//
// The lab's container is a real Docker container (its own mount and PID namespaces, the
// capabilities SONiC gives bgp: NET_ADMIN, SYS_ADMIN), in the switch's network namespace
// (nsenter), running this machine's FRR: the image is an empty root with the host's /usr
// and /etc mounted read-only, so nothing is downloaded and the FRR is the one the Linux
// layout runs. /etc/frr is the switch's own folder (SONiC mounts /etc/sonic/frr there).
#pragma once

#include <string>
#include <vector>

#include "twinrail/lab/shell.h"

namespace twinrail::lab {

// The container of the FRR instance of namespace `ns`.
std::string frrContainerName(const std::string& ns);
// True when namespace `ns`'s FRR runs in a container (a lab in SONiC's layout).
bool frrInContainer(const std::string& ns);

// Starts FRR for `ns` in its container with `frrConf` (split-unified: one frr.conf, loaded
// with vtysh -b as SONiC's supervisord does), zebra and bgpd as the release's supervisord
// starts them (bgpd -P 0 unless `bgpdVtyPort`), and waits until it has loaded the
// configuration. Throws std::runtime_error (with the start log) when it does not come up.
void startFrrContainer(const std::string& ns, const std::string& frrConf, bool bgpdVtyPort);
// Restarts the container, as SONiC's bgp service does when FRR dies, and waits as above.
void restartFrrContainer(const std::string& ns);
// Removes the containers of these namespaces (no error when one is gone).
void removeFrrContainers(const std::vector<std::string>& namespaces);

// The argv that runs vtysh against namespace `ns`'s FRR, wherever it runs: `vtysh -N ns`
// on the host, or `docker exec <container> vtysh`. Append "-c", command.
Argv vtyshFor(const std::string& ns);

}  // namespace twinrail::lab
