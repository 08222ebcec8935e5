// twinrail-plan: from a GPU count and a switch model to a plan file, a cabling plan and
// every switch's configuration. See `twinrail-plan --help`.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "plan_files.h"
#include "sku_dir.h"
#include "twinrail/common/names.h"
#include "twinrail/common/sysexits.h"
#include "twinrail/common/tool_main.h"
#include "twinrail/plan/outputs.h"
#include "twinrail/plan/plan.h"
#include "twinrail/sim/verdict.h"

namespace plan = twinrail::plan;
namespace exitcode = twinrail::exitcode;
namespace fs = std::filesystem;

namespace {

constexpr const char* kUsage = R"(usage: twinrail-plan --gpus N [options] [--out DIR | --json]
       twinrail-plan --from PLAN.json --out DIR
       twinrail-plan --tables | --models

Sizes a dual-plane, rail-optimized leaf/spine fabric and writes its plan.

  --gpus N                 GPUs in the cluster (a multiple of --gpus-per-server)
  --gpus-per-server N      GPUs (= NICs = rails) per server             [8]
  --model NAME             leaf and spine model from the catalog (--models)
  --spine-model NAME       a different spine model
  --radix N --port-speed G [--breakouts 1,2,4]
                           a generic model: N ports of G Gbit/s
  --nic-speed G            NIC speed                                    [400]
  --nic-ports N            NIC ports, spread over the planes            [2]
  --planes 1|2                                                          [2]
  --oversubscription N     leaf downlink:uplink N:1                     [1]
  --uplink-speed G         leaf-spine link speed   [the NIC speed if the ports break out to it]
  --spines-per-plane N     instead of the fewest that hold the leaves
  --attach bond|routed|evpn-mh
                           how a NIC attaches to its two leaves                  [bond]
                           bond: the seed's 3.1.1, a bonded NIC (balance-xor, layer3+4),
                           dual-send ARP, leaves proxy ARP and route it as a /32;
                           routed: separate ports, receive-only BGP to both leaves;
                           evpn-mh: the seed's 3.1.2, an 802.3ad NIC bond to an
                           Ethernet segment the leaf pair shares (EVPN over an AUX link)
  --host-bgp               the same as --attach routed
  --lb MODE                fabric load balancing: ecmp|static|ars|ars-global|spray [ecmp]
                           static: the seed's static smart routing, each downlink
                           pinned to one uplink (UPLINK_PIN in the leaves' config_db);
                           ars: flowlet adaptive routing on every fabric port (SONiC's
                           ARS_PROFILE/ARS_OBJECT/ARS_INTERFACES); ars-global: ARS whose
                           quality also counts pathqd's link bandwidth beyond the next hop
                           (GLOBAL_ARS); spray: per-packet random (SWITCH_HASH|GLOBAL
                           ecmp_hash_algorithm RANDOM)
  --gateway-mac MAC        the one MAC of the rail gateways (bond)   [00:00:5e:00:01:01]
  --roce-priority N --roce-dscp N --cnp-priority N --cnp-dscp N
                           RoCEv2 QoS for NICs, switches and NCCL: the lossless
                           priority and the data's DSCP, the CNPs' strict
                           priority and DSCP (docs/roce.md)          [3, 26, 6, 48]
  --cable-m HOST,FABRIC    the longest leaf-NIC and leaf-spine cables, metres:
                           SONiC's PFC headroom (CABLE_LENGTH)            [30,100]

  --nos linux|sonic        the switches' configs: Linux with FRR (frr.conf,
                           config_db.json), or SONiC (see docs/planner.md)       [linux]
  --hwsku DIR              sonic: the switches' HWSKU directory (port_config.ini,
                           hwsku.json, pg_profile_lookup.ini; platform.json there
                           or in the platform directory above)
                                                        [the catalog model's own]
  --spine-hwsku DIR        sonic: the spines' HWSKU, when it is not --hwsku's
  --sonic-release R        sonic: the release the switches run, one of 202405,
                           202411, 202505, 202605, master: what it has decides the
                           rows (docs/sonic.md, "Releases")             [202505]
  --sonic-buffer-model M   sonic: traditional (lossless PGs from pg_profile_lookup.ini)
                           or dynamic (BUFFER_PG rows, profile NULL)  [traditional]

  --out DIR     write DIR/plan.json, DIR/cabling.csv, DIR/cabling.json,
                DIR/inventory.json (each switch's Redis, for twinrail verify),
                DIR/configs/<switch>/{frr.conf,config_db.json} (+ links.sh, the
                bonds, bridges and VXLAN devices, with evpn-mh), and per server
                DIR/configs/servers/<server>/: netplan/60-twinrail.yaml, the dual-send
                ARP unit and planesteer.json (bond), or <nic>/frr.conf (routed);
                with --nos sonic, DIR/configs/<switch>/{frr.conf,config_db.overlay.json,
                breakouts.json} instead of the switches' files (`twinrail sonic-apply`
                turns them into the switch's deployment)
  --json        print the sizing as JSON instead of text
  --simulate    also print the flow model's verdict (docs/simulation.md): a
                permutation under ECMP, static routing, WCMP, ARS, spraying,
                and a leaf failure's cost (5 seeds; seconds at 16k GPUs)
  --from FILE   read a plan file (checked) instead of sizing a request
  --tables      print the seed's sizing tables as this planner computes them

Exit codes: 0 ok, 64 usage, 65 the request cannot be built (or not on that SONiC
release: a release twinrail does not support, or a feature it lacks, named; or a HWSKU
file is refused), 66 the plan file or a HWSKU file cannot be read, 73 the output cannot
be written, 78 a plan file or a plan name refused (the message says which field).
)";

struct Args {
    plan::Request request;
    std::string out;
    std::string from;
    bool json = false;
    bool simulate = false;
    bool tables = false;
    bool models = false;
    int radix = 0;
    int portSpeed = 0;
    std::vector<int> breakouts{1};
    bool sonic = false;
    std::string hwsku;
    std::string spineHwsku;
    plan::SonicOptions sonicOptions;
    std::string sonicRelease;
};

using twinrail::UsageError;

int toInt(const std::string& flag, const std::string& v) {
    try {
        size_t used = 0;
        int n = std::stoi(v, &used);
        if (used == v.size()) return n;
    } catch (const std::exception&) {
    }
    throw UsageError{flag + ": \"" + v + "\" is not a whole number"};
}

plan::SwitchModel catalogModel(const std::string& name) {
    if (auto m = plan::findModel(name)) return *m;
    throw UsageError{"unknown switch model \"" + name + "\" (see --models, or use --radix)"};
}

Args parse(int argc, char** argv) {
    Args a;
    auto value = [argc, argv](int& i) {
        if (i + 1 >= argc) throw UsageError{std::string(argv[i]) + " needs a value"};
        return std::string(argv[++i]);
    };
    for (int i = 1; i < argc; ++i) {
        std::string f = argv[i];
        auto& r = a.request;
        if (f == "--gpus") {
            r.gpus = toInt(f, value(i));
        } else if (f == "--gpus-per-server") {
            r.gpusPerServer = toInt(f, value(i));
        } else if (f == "--model") {
            r.leafModel = catalogModel(value(i));
        } else if (f == "--spine-model") {
            r.spineModel = catalogModel(value(i));
        } else if (f == "--radix") {
            a.radix = toInt(f, value(i));
        } else if (f == "--port-speed") {
            a.portSpeed = toInt(f, value(i));
        } else if (f == "--breakouts") {
            a.breakouts.clear();
            std::stringstream in(value(i));
            for (std::string part; std::getline(in, part, ',');)
                a.breakouts.push_back(toInt(f, part));
        } else if (f == "--nic-speed") {
            r.nicSpeedGbps = toInt(f, value(i));
        } else if (f == "--nic-ports") {
            r.nicPorts = toInt(f, value(i));
        } else if (f == "--planes") {
            r.planes = toInt(f, value(i));
        } else if (f == "--oversubscription") {
            r.oversubscription = toInt(f, value(i));
        } else if (f == "--uplink-speed") {
            r.uplinkSpeedGbps = toInt(f, value(i));
        } else if (f == "--spines-per-plane") {
            r.spinesPerPlane = toInt(f, value(i));
        } else if (f == "--roce-priority") {
            r.roce.priority = toInt(f, value(i));
        } else if (f == "--roce-dscp") {
            r.roce.dscp = toInt(f, value(i));
        } else if (f == "--cnp-priority") {
            r.roce.cnpPriority = toInt(f, value(i));
        } else if (f == "--cnp-dscp") {
            r.roce.cnpDscp = toInt(f, value(i));
        } else if (f == "--cable-m") {
            const std::string v = value(i);
            const auto comma = v.find(',');
            if (comma == std::string::npos) throw UsageError{"--cable-m: HOST,FABRIC in metres"};
            r.roce.hostCableM = toInt(f, v.substr(0, comma));
            r.roce.fabricCableM = toInt(f, v.substr(comma + 1));
        } else if (f == "--attach") {
            auto at = plan::parseAttach(value(i));
            if (!at) throw UsageError{"--attach: bond, routed or evpn-mh"};
            r.attach = *at;
        } else if (f == "--lb") {
            auto lb = plan::parseLb(value(i));
            if (!lb) throw UsageError{std::string("--lb: one of ") + plan::kLbNames};
            r.lb = *lb;
        } else if (f == "--host-bgp") {  // the routed attachment's old name
            r.attach = plan::Attach::Routed;
        } else if (f == "--gateway-mac") {
            r.gatewayMac = value(i);
            // It reaches every leaf's config as written; a bad one is named here, printable.
            if (r.gatewayMac.size() != 17 ||
                r.gatewayMac.find_first_not_of("0123456789abcdefABCDEF:") != std::string::npos) {
                throw UsageError{"--gateway-mac: \"" + twinrail::names::printable(r.gatewayMac) +
                                 "\" is not a MAC address (xx:xx:xx:xx:xx:xx)"};
            }
        } else if (f == "--nos") {
            std::string nos = value(i);
            if (nos != "linux" && nos != "sonic") {
                throw UsageError{"--nos: linux or sonic, not \"" + twinrail::names::printable(nos) +
                                 "\""};
            }
            a.sonic = nos == "sonic";
        } else if (f == "--hwsku") {
            a.hwsku = value(i);
        } else if (f == "--spine-hwsku") {
            a.spineHwsku = value(i);
        } else if (f == "--sonic-release") {
            a.sonicRelease = value(i);  // checked with the plan: a refusal is exit 65
        } else if (f == "--sonic-buffer-model") {
            const std::string model = value(i);
            if (model != "traditional" && model != "dynamic") {
                throw UsageError{"--sonic-buffer-model: traditional or dynamic, not \"" +
                                 twinrail::names::printable(model) + "\""};
            }
            a.sonicOptions.bufferModel = model == "dynamic" ? plan::SonicBufferModel::Dynamic
                                                            : plan::SonicBufferModel::Traditional;
        } else if (f == "--out") {
            a.out = value(i);
        } else if (f == "--from") {
            a.from = value(i);
        } else if (f == "--json") {
            a.json = true;
        } else if (f == "--simulate") {
            a.simulate = true;
        } else if (f == "--tables") {
            a.tables = true;
        } else if (f == "--models") {
            a.models = true;
        } else {
            throw UsageError{"unknown option " + f};
        }
    }
    if (!a.sonic && (!a.hwsku.empty() || !a.spineHwsku.empty() || !a.sonicRelease.empty()))
        throw UsageError{"--hwsku, --spine-hwsku and --sonic-release need --nos sonic"};
    if (a.radix > 0 || a.portSpeed > 0) {
        if (!a.request.leafModel.name.empty())
            throw UsageError{"--model and --radix exclude each other"};
        a.request.leafModel = {
            "generic-" + std::to_string(a.radix) + "x" + std::to_string(a.portSpeed) + "G", a.radix,
            a.portSpeed, a.breakouts};
    }
    return a;
}

void printTables() {
    for (const auto& model : plan::switchCatalog()) {
        std::cout << model.name << " (" << model.ports << "x" << model.portSpeedGbps
                  << "G), 2 planes\n"
                  << "GPUs/servers  leaves  spines  400G links per leaf-spine pair\n";
        for (int gpus = 256; gpus <= 16384; gpus *= 2) {
            plan::Request r;
            r.gpus = gpus;
            r.leafModel = model;
            auto n = plan::normalize(r);
            auto s = plan::size(std::get<plan::Request>(n));
            if (auto* z = std::get_if<plan::Sizing>(&s)) {
                std::string row = std::to_string(gpus) + "/" + std::to_string(z->servers);
                std::cout << row << std::string(14 - row.size(), ' ') << z->leavesTotal() << "\t"
                          << z->spinesTotal() << "\t" << z->linksPerLeafSpine << "\n";
            }
        }
        std::cout << "\n";
    }
}

bool writeFile(const fs::path& path, const std::string& text) {
    std::ofstream out(path);
    out << text;
    out.close();
    if (!out) std::cerr << "twinrail-plan: cannot write " << path.string() << "\n";
    return static_cast<bool>(out);
}

int writePlan(const plan::Plan& p, const fs::path& dir,
              const twinrail::plantool::SonicTarget* sonic) {
    // Every path first (each name checked, each path under DIR), then the files: a plan
    // refused here leaves nothing behind.
    auto files = twinrail::plantool::planFiles(p, dir, sonic);
    if (auto* why = std::get_if<std::string>(&files)) {
        std::cerr << "twinrail-plan: refusing to write the plan: " << *why << "\n";
        return exitcode::kConfig;
    }
    for (const auto& f : std::get<std::vector<twinrail::plantool::OutFile>>(files)) {
        std::error_code ec;
        fs::create_directories(f.path.parent_path(), ec);
        if (ec) {
            std::cerr << "twinrail-plan: cannot create " << f.path.parent_path().string() << ": "
                      << ec.message() << "\n";
            return exitcode::kCantCreate;
        }
        if (!writeFile(f.path, f.text)) return exitcode::kCantCreate;
    }
    std::cout << plan::sizingReport(p) << "wrote " << (dir / "plan.json").string()
              << ", cabling.csv/json, inventory.json, " << p.switches.size() << " switch and "
              << p.servers.size() << " server configs under " << (dir / "configs").string() << "\n";
    return exitcode::kOk;
}

// The HWSKU of a model: --hwsku/--spine-hwsku, else the one shipped for the catalog model.
std::variant<plan::Sku, int> skuFor(const std::string& given, const std::string& model) {
    fs::path dir = given;
    if (dir.empty()) dir = twinrail::plantool::defaultSkuDir(model);
    if (dir.empty()) {
        throw UsageError{"--nos sonic: no HWSKU is shipped for model \"" +
                         twinrail::names::printable(model) + "\"; give --hwsku DIR"};
    }
    auto sku = twinrail::plantool::loadSkuDir(dir);
    if (auto* e = std::get_if<twinrail::plantool::SkuLoadError>(&sku)) {
        std::cerr << "twinrail-plan: HWSKU: " << e->message << "\n";
        return e->exitCode;
    }
    return std::get<plan::Sku>(sku);
}

// Loads the HWSKUs and checks, before anything is written, that the plan can be expressed
// on SONiC and that every switch's ports exist on its SKU (exit 65 with the reason).
int sonicTarget(const Args& a, const plan::Plan& p, twinrail::plantool::SonicTarget& out) {
    plan::SonicOptions options = a.sonicOptions;
    if (!a.sonicRelease.empty()) {
        if (auto why = plan::sonicReleaseRefusal(a.sonicRelease)) {
            std::cerr << "twinrail-plan: --sonic-release: " << *why << "\n";
            return exitcode::kDataErr;
        }
        options.release = *plan::parseSonicRelease(a.sonicRelease);
    }
    if (auto why = plan::sonicRefusal(p, options)) {
        std::cerr << "twinrail-plan: --nos sonic: " << *why << "\n";
        return exitcode::kDataErr;
    }
    auto leaf = skuFor(a.hwsku, p.request.leafModel.name);
    if (auto* rc = std::get_if<int>(&leaf)) return *rc;
    out.leafSku = std::get<plan::Sku>(leaf);
    const bool sameModel =
        p.request.spineModel.name.empty() || p.request.spineModel.name == p.request.leafModel.name;
    if (a.spineHwsku.empty() && (sameModel || !a.hwsku.empty())) {
        out.spineSku = out.leafSku;
    } else {
        auto spine = skuFor(a.spineHwsku, p.request.spineModel.name);
        if (auto* rc = std::get_if<int>(&spine)) return *rc;
        out.spineSku = std::get<plan::Sku>(spine);
    }
    out.options = options;
    for (const auto& sw : p.switches) {
        auto mapped = plan::mapPorts(sw.spine ? out.spineSku : out.leafSku, sw);
        if (auto* why = std::get_if<std::string>(&mapped)) {
            std::cerr << "twinrail-plan: --nos sonic: " << *why << "\n";
            return exitcode::kDataErr;
        }
        if (auto why =
                plan::sonicEvpnAuxRefusal(p, sw, out.leafSku, std::get<plan::PortMap>(mapped))) {
            std::cerr << "twinrail-plan: --nos sonic: " << *why << "\n";
            return exitcode::kDataErr;
        }
    }
    return exitcode::kOk;
}

int run(const Args& a) {
    if (a.models) {
        for (const auto& m : plan::switchCatalog()) {
            std::cout << m.name << "  " << m.ports << " x " << m.portSpeedGbps << "G, breakouts";
            for (int b : m.breakouts) std::cout << " " << b;
            std::cout << "\n";
        }
        return exitcode::kOk;
    }
    if (a.tables) {
        printTables();
        return exitcode::kOk;
    }
    std::variant<plan::Plan, plan::SizingError> built;
    if (!a.from.empty()) {
        std::ifstream in(a.from);
        auto j = nlohmann::json::parse(in, nullptr, false);
        if (!in.is_open() || j.is_discarded()) {
            std::cerr << "twinrail-plan: " << a.from << ": cannot read it as JSON\n";
            return exitcode::kNoInput;
        }
        built = plan::planFromJson(j);
        if (auto* e = std::get_if<plan::SizingError>(&built)) {
            std::cerr << "twinrail-plan: " << a.from << ": " << e->message << "\n";
            return exitcode::kConfig;
        }
    } else {
        if (a.request.gpus <= 0) throw UsageError{"--gpus is required"};
        built = plan::buildPlan(a.request);
    }
    if (auto* e = std::get_if<plan::SizingError>(&built)) {
        std::cerr << "twinrail-plan: cannot plan this fabric: " << e->message << "\n";
        return exitcode::kDataErr;
    }
    const auto& p = std::get<plan::Plan>(built);
    std::optional<twinrail::plantool::SonicTarget> sonic;
    if (a.sonic) {
        sonic.emplace();
        if (int rc = sonicTarget(a, p, *sonic); rc != exitcode::kOk) return rc;
    }
    int rc = exitcode::kOk;
    if (!a.out.empty()) {
        rc = writePlan(p, a.out, sonic ? &*sonic : nullptr);
    } else if (a.json) {
        std::cout << plan::toJson(p)["sizing"].dump(2) << "\n";
    } else {
        std::cout << plan::sizingReport(p);
    }
    constexpr int kVerdictSeeds = 5;
    // after the JSON, on stderr, so that --json stays one parseable object
    if (a.simulate && rc == exitcode::kOk)
        (a.json ? std::cerr : std::cout) << twinrail::sim::verdict(p, kVerdictSeeds);
    return rc;
}

}  // namespace

int main(int argc, char** argv) {
    return twinrail::toolMain(argc, argv, "twinrail-plan", kUsage,
                              [argc, argv] { return run(parse(argc, argv)); });
}
