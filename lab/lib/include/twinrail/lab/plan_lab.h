// A plan rehearsed in network namespaces: every switch of the plan is a namespace with
// real FRR (its generated frr.conf), its own Redis, pathqd and, on leaves, hostrouted (its
// generated config_db.json); every server NIC is a namespace with one port per plane.
//
// A lab outlives the command that started it (`twinrail-lab up`, then `status`, then
// `down`): its processes run detached inside its namespaces, and everything it owns is
// found again from its name alone:
//   namespaces    trl-<name>-<node>
//   state         /run/twinrail-lab/<name>/ (plan.json, per-node configs, sockets, logs)
//   FRR           /var/run/frr/trl-<name>-<node>, /etc/frr/trl-<name>-<node>
// so `down` (and `up`, before it builds) removes all of it even after a crash.
#pragma once

#include <sys/types.h>
#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "twinrail/lab/shell.h"
#include "twinrail/lab/sonic_layout.h"
#include "twinrail/plan/evpn_mh.h"
#include "twinrail/plan/plan.h"

namespace twinrail::lab {

class Fabric;

struct LabBinaries {
    std::string hostrouted = "hostrouted";
    std::string pathqd = "pathqd";
    std::string self;                   // this tool, re-run inside a namespace to announce a NIC
    std::string twinrail = "twinrail";  // the operator CLI, for the tour
    std::string planesteer = "planesteer";  // the bonded hosts' plane steering (optional)
    std::string arsd = "arsd";              // software ARS, on switches whose config_db enables it
};

// The scaled-down plan the lab builds by default: 2 servers x 2 GPUs (2 rails), a 400G
// NIC as 2x200G, 2 planes of 2 leaves and 2 spines each, NICs attached as bonds (the
// seed's design), or routed: servers that run receive-only BGP (--attach routed).
plan::Request defaultLabRequest(plan::Attach attach = plan::Attach::Bond);

// `up --nos sonic`: the switches in SONiC's layout, built from the planner's SONiC overlay
// (sonic_layout.h, docs/lab.md "SONiC layout"). The HWSKU of a switch model is
// `hwskuDir` when given, else lab/hwsku/<model>, else the planner's libs/plan/hwsku/<model>.
struct SonicLayout {
    // Unset: kLabSonicRelease, or master for an evpn-mh plan (the only release whose
    // models have EVPN_ETHERNET_SEGMENT).
    std::optional<plan::SonicRelease> release;
    std::string hwskuDir;
};
// The HWSKU directory the lab uses for `model` (throws SonicLayoutError when none exists).
std::string labSkuDir(const std::string& model, const std::string& hwskuDir = "");
// The lab's sonic.json (sonicRecord()), or null for a lab in the Linux layout.
nlohmann::json labSonicRecord(const std::string& labName);

class PlanLab {
  public:
    // `name`: 1-6 of [a-z0-9]; it keeps interface and namespace names short and unique.
    // With `sonic`, the plan's switch ports are renamed to their HWSKU names at once (plan()
    // has EthernetN names); a plan SONiC cannot express throws SonicLayoutError.
    PlanLab(std::string name, plan::Plan plan, LabBinaries bins,
            std::optional<SonicLayout> sonic = std::nullopt);

    static bool validName(const std::string& name);
    static std::string stateDir(const std::string& name);
    static std::string nsPrefix(const std::string& name);
    // Everything a lab of this name left: processes, namespaces, FRR and state files.
    // Returns what it removed, one line each.
    static std::vector<std::string> down(const std::string& name);
    // What a lab of this name still holds (after `down` it must be nothing): "namespaces",
    // its state folder, FRR directories, "daemons" (a process with its pathspace).
    static std::vector<std::string> leftovers(const std::string& name);
    // Reads the plan a running lab was built from.
    static plan::Plan loadPlan(const std::string& name);

    // Removes leftovers, builds, starts every daemon and waits until every NIC reaches
    // every other NIC through both planes. On failure everything is removed again,
    // unless `keepOnFailure` (to look at what went wrong; `down` removes it later).
    void up(bool keepOnFailure = false);

    const plan::Plan& plan() const { return plan_; }
    std::string ns(const std::string& node) const { return prefix_ + node; }
    static std::string nicNode(const plan::Server& s, const plan::Nic& n) {
        return s.name + "-" + n.name;
    }

  private:
    void buildNamespaces();
    void addressSwitches();
    void linkNics(Fabric& fabric);
    void buildEvpnLinks();
    // The leaf's EVPN-MH objects under the names its layout uses (Linux or SONiC).
    plan::EvpnMhLeaf evpnLeaf(const plan::Switch& leaf) const;
    void addressNics();
    void startSwitch(const plan::Switch& sw);
    void startBondNic(const plan::Server& srv, const plan::Nic& nic);
    const plan::Request& r() const { return plan_.request; }
    bool converged() const;
    // The SONiC layout (sonic_lab.cpp).
    void prepareSonic(const plan::Plan& plannerPlan);
    void addressSonicSwitches();
    void buildSonicSegments();
    void startSonicSwitch(const plan::Switch& sw);
    std::string frrConfFor(const plan::Switch& sw) const;

    std::string name_;
    std::string prefix_;
    std::string dir_;
    plan::Plan plan_;
    LabBinaries bins_;
    std::optional<SonicLayout> sonic_;
    // Per switch: the SKU's default config_db with the overlay, lab overrides applied; and
    // the overlay's frr.conf.
    std::map<std::string, nlohmann::json> sonicConfigDb_;
    std::map<std::string, std::string> sonicFrrConf_;
    std::map<std::string, std::string> sonicAux_;  // evpn-mh leaves: the AUX port
    plan::SonicRelease sonicRelease_ = plan::kSonicDefaultRelease;
    nlohmann::json sonicRecord_;
};

// A NIC's emulated bond, as the lab builds it from the plan (bond attachment).
struct BondNic;
BondNic bondNicFor(const std::string& labName, const plan::Plan& p, const plan::Server& srv,
                   const plan::Nic& nic);

// A command run inside a lab node's namespace: its output (stdout, then stderr) and rc.
struct NodeResult {
    int rc = -1;
    std::string out;
};
// `argv` as it is, no shell.
NodeResult inNodeRun(const std::string& labName, const std::string& node, const Argv& argv);
// Several, in order; with stopOnError the first failure ends it (as `set -e`).
NodeResult inNodeAll(const std::string& labName, const std::string& node,
                     const std::vector<Argv>& commands, bool stopOnError = true);

// `<node>` or `<node>:<port>`: a whole node or one port, on a switch or a server NIC. A
// whole switch dies as a switch does: every link down, then everything on it killed
// (Redis, FRR, the daemons); restoring it boots them again, the host ports last
// (node_power.cpp). A whole NIC has its ports taken down. restore brings it back and has
// the NICs on it announce themselves again, as a NIC does when its link comes up.
void failNode(const std::string& labName, const std::string& target);
void restoreNode(const std::string& labName, const LabBinaries& bins, const std::string& target);

// The lab's own services on a switch: its Redis and the twinrail daemons, started as the
// systemd units start them (an unprivileged user, only the units' capabilities) and, for
// the daemons, ready when they send READY=1 to their NOTIFY_SOCKET. They are found again
// from the lab's name, so a later command can stop or restart them.
enum class Service { Redis, Hostrouted, Pathqd, Arsd };
const char* serviceName(Service s);
void startService(const std::string& labName, const LabBinaries& bins, const std::string& node,
                  Service s);
// Sends `signal` (SIGTERM: a clean stop, SIGKILL: a crash) and waits until it is gone.
// Returns false when it was not running.
bool stopService(const std::string& labName, const std::string& node, Service s, int signal);
// Starts arsd on the switch when its config_db enables ARS (the ARS tables or
// SWITCH_HASH RANDOM; `twinrail-lab up --lb ars|ars-global|spray`), or when its ARS
// tables are bad (arsd then refuses them, and the lab says why). Whether it started.
bool startArsdIfEnabled(const std::string& labName, const LabBinaries& bins,
                        const std::string& node, const nlohmann::json& configDb);
std::vector<pid_t> servicePids(const std::string& labName, const std::string& node, Service s);

// Miscables on purpose: the cables of two NIC ports (NODE:PORT each) change places, as
// two fibres swapped at a patch panel; swapping them again puts them back. The NICs then
// announce themselves, as on link up.
void swapNicCables(const std::string& labName, const LabBinaries& bins, const std::string& a,
                   const std::string& b);

// Starts planesteer on every bonded NIC of the plan (bond0 and its two ports), with the
// config the planner writes for servers (gateway and fabric: other rails steered too).
void startPlaneSteers(const std::string& labName, const plan::Plan& plan, const std::string& bin);

// How a switch's FRR goes down and comes back (`twinrail-lab restart-frr`):
//   Kill     zebra and bgpd die by SIGKILL (a crash) and come back with the same config,
//            as watchfrr or systemd bring them back (watchfrr itself, once Service ran);
//   Clean    every FRR daemon stops on SIGTERM and starts again;
//   Service  `systemctl restart frr` on a switch: FRR's own init script
//            (frrinit.sh restart <instance>, which runs watchfrr), with the switch's
//            config as the instance's /etc/frr/frr.conf.
enum class FrrRestart { Kill, Clean, Service };
void restartFrr(const std::string& labName, const std::string& node, FrrRestart how);

// Has every NIC whose port is one of `ports` of `node` (a NIC or a leaf) announce itself
// on that port.
void announceOn(const std::string& labName, const LabBinaries& bins, const plan::Plan& plan,
                const std::string& node, const std::vector<std::string>& ports);

// Sends the NIC's "dual-send ARP": an ARP request for the gateway from the NIC's address,
// out of one port. Runs inside the NIC's namespace (twinrail-lab announce ...). With
// `reply`, an unsolicited ARP reply instead (what a spoofer may send; the trust tests do).
bool sendArpAnnounce(const std::string& ifname, const std::string& source,
                     const std::string& target, std::string& error, bool reply = false);

}  // namespace twinrail::lab
