#include "twinrail/ars/bpf_datapath.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

extern "C" {
#include "ars_maps.h"
}

namespace twinrail::ars::detail {
extern const unsigned char kArsBpfObject[];
extern const std::size_t kArsBpfObjectSize;
}  // namespace twinrail::ars::detail

namespace twinrail::ars {

namespace {

constexpr uint32_t kMaxFlowsLimit = 1U << 24;
constexpr size_t kVerifierLogSize = 1U << 20;
constexpr size_t kVerifierLogTail = 3000;  // enough for the failing instruction and why
constexpr const char* kProgramName = "ars_ingress";

std::string errnoText(int err) {
    return std::strerror(err < 0 ? -err : err);
}

[[noreturn]] void fail(const std::string& what, int err) {
    throw std::runtime_error("ARS data path: " + what + ": " + errnoText(err));
}

uint32_t modeValue(AssignMode m) {
    switch (m) {
        case AssignMode::FlowletQuality:
            return ARS_MODE_FLOWLET_QUALITY;
        case AssignMode::FlowletRandom:
            return ARS_MODE_FLOWLET_RANDOM;
        case AssignMode::PacketQuality:
            return ARS_MODE_PACKET_QUALITY;
        case AssignMode::PacketRandom:
            return ARS_MODE_PACKET_RANDOM;
    }
    throw std::invalid_argument("ARS data path: assign mode " +
                                std::to_string(static_cast<int>(m)) + " is unknown");
}

int mapFd(bpf_object* obj, const char* name) {
    bpf_map* map = bpf_object__find_map_by_name(obj, name);
    if (map == nullptr) throw std::runtime_error(std::string("ARS data path: no map ") + name);
    return bpf_map__fd(map);
}

// The key of the family's trie, host bits cleared (the trie compares only prefixlen bits,
// but two keys differing beyond them would be two entries for one route).
template <typename Key>
Key lpmKey(const IpPrefix& p) {
    Key key{};
    key.prefixlen = static_cast<uint32_t>(p.length);
    std::copy_n(p.addr.data(), sizeof(key.addr), key.addr);
    for (size_t bit = static_cast<size_t>(p.length); bit < sizeof(key.addr) * 8; ++bit)
        key.addr[bit / 8] = static_cast<uint8_t>(key.addr[bit / 8] & ~(0x80U >> (bit % 8)));
    return key;
}

void checkPrefix(const IpPrefix& p, const char* what) {
    if (p.addr.family() == 0 || p.length < 0 || p.length > p.addr.maxPrefixLen()) {
        throw std::invalid_argument(std::string("ARS data path: ") + what + ": prefix " + p.str() +
                                    " has no family or a bad length");
    }
}

bpf_tc_hook ingressHook(int ifindex) {
    bpf_tc_hook hook{};
    hook.sz = sizeof(hook);
    hook.ifindex = ifindex;
    hook.attach_point = BPF_TC_INGRESS;
    return hook;
}

bpf_tc_opts ourFilter() {
    bpf_tc_opts opts{};
    opts.sz = sizeof(opts);
    opts.handle = kArsTcHandle;
    opts.priority = kArsTcPriority;
    return opts;
}

// Gone port, no clsact, no filter at our handle: nothing of ours to remove.
bool nothingThere(int err) {
    return err == -ENOENT || err == -ENODEV || err == -EINVAL;
}

}  // namespace

void BpfDatapath::ObjectCloser::operator()(bpf_object* o) const {
    bpf_object__close(o);
}

BpfDatapath::BpfDatapath(uint32_t maxFlows) : maxFlows_(maxFlows) {
    if (maxFlows == 0 || maxFlows > kMaxFlowsLimit || (maxFlows & (maxFlows - 1)) != 0) {
        throw std::invalid_argument("ARS data path: max_flows " + std::to_string(maxFlows) +
                                    " is not a power of two in 1.." +
                                    std::to_string(kMaxFlowsLimit));
    }
    bpf_object_open_opts openOpts{};
    openOpts.sz = sizeof(openOpts);
    openOpts.object_name = "twinrail_ars";
    bpf_object* raw =
        bpf_object__open_mem(detail::kArsBpfObject, detail::kArsBpfObjectSize, &openOpts);
    if (raw == nullptr) fail("opening the embedded BPF object", errno);
    object_.reset(raw);

    bpf_map* flows = bpf_object__find_map_by_name(raw, "ars_flows");
    if (flows == nullptr) throw std::runtime_error("ARS data path: no map ars_flows");
    if (int err = bpf_map__set_max_entries(flows, maxFlows); err != 0)
        fail("sizing the flow table to " + std::to_string(maxFlows), err);
    bpf_program* prog = bpf_object__find_program_by_name(raw, kProgramName);
    if (prog == nullptr) throw std::runtime_error("ARS data path: no program ars_ingress");
    // libbpf loads without a log first and fills this one only when the verifier refuses.
    std::string log(kVerifierLogSize, '\0');
    bpf_program__set_log_buf(prog, log.data(), log.size());
    if (int err = bpf_object__load(raw); err != 0) {
        log.resize(std::strlen(log.c_str()));
        if (log.size() > kVerifierLogTail) log = "..." + log.substr(log.size() - kVerifierLogTail);
        throw std::runtime_error("ARS data path: loading the tc program: " + errnoText(err) +
                                 (log.empty() ? "" : "; verifier log:\n" + log));
    }
    progFd_ = bpf_program__fd(prog);
    configFd_ = mapFd(raw, "ars_config");
    routesV4Fd_ = mapFd(raw, "ars_routes_v4");
    routesV6Fd_ = mapFd(raw, "ars_routes_v6");
    bandFd_ = mapFd(raw, "ars_port_band");
    rateFd_ = mapFd(raw, "ars_port_rate");
    backlogFd_ = mapFd(raw, "ars_port_backlog");
    pinnedFd_ = mapFd(raw, "ars_pinned");
    flowsFd_ = mapFd(raw, "ars_flows");
    countersFd_ = mapFd(raw, "ars_counters");
    writeConfig();
}

BpfDatapath::~BpfDatapath() {
    for (int ifindex : attached_) {
        bpf_tc_hook hook = ingressHook(ifindex);
        bpf_tc_opts opts = ourFilter();
        bpf_tc_detach(&hook, &opts);  // a port already gone took the filter with it
    }
}

void BpfDatapath::writeConfig() {
    ars_config cfg{};
    cfg.mode = modeValue(settings_.mode);
    cfg.global = settings_.global ? 1 : 0;
    cfg.idle_ns = uint64_t{settings_.idleTimeUs} * 1000;
    cfg.now_override_ns = clockOverrideNs_;
    cfg.flow_mask = maxFlows_ - 1;
    uint32_t zero = 0;
    if (bpf_map_update_elem(configFd_, &zero, &cfg, BPF_ANY) != 0)
        fail("writing ars_config", errno);
}

void BpfDatapath::configure(const DatapathSettings& s) {
    modeValue(s.mode);  // an unknown mode throws before anything changes
    settings_ = s;
    writeConfig();
}

void BpfDatapath::setClockOverride(uint64_t nowNs) {
    clockOverrideNs_ = nowNs;
    writeConfig();
}

void BpfDatapath::setRoute(const IpPrefix& dst, const std::vector<PathNexthop>& nexthops) {
    checkPrefix(dst, "setRoute");
    ars_group group{};
    group.generation = ++generation_;
    group.count = static_cast<uint32_t>(std::min<size_t>(nexthops.size(), ARS_MAX_NEXTHOPS));
    bool eligible = nexthops.size() >= 2 && nexthops.size() <= ARS_MAX_NEXTHOPS;
    for (uint32_t i = 0; i < group.count; ++i) {
        const PathNexthop& in = nexthops[i];
        ars_nexthop& out = group.nh[i];
        out.ifindex = static_cast<uint32_t>(std::max(in.ifindex, 0));
        out.weight = in.weight;
        group.heaviest = std::max(group.heaviest, in.weight);
        out.family = static_cast<uint8_t>(in.gateway.family());
        if (in.gateway.family() != 0)
            std::memcpy(out.gateway, in.gateway.data(), in.gateway.size());
        // The weights' sum is a u32 in the program; the kernel's are 1..256.
        if (in.ifindex <= 0 || in.weight > (1U << 24)) eligible = false;
        if (dst.addr.isV6() && in.gateway.isV4()) eligible = false;
    }
    group.eligible = eligible ? 1 : 0;
    int rc = 0;
    if (dst.addr.isV4()) {
        auto key = lpmKey<ars_lpm_v4>(dst);
        rc = bpf_map_update_elem(routesV4Fd_, &key, &group, BPF_ANY);
    } else {
        auto key = lpmKey<ars_lpm_v6>(dst);
        rc = bpf_map_update_elem(routesV6Fd_, &key, &group, BPF_ANY);
    }
    if (rc != 0) fail("setRoute " + dst.str(), errno);
}

void BpfDatapath::removeRoute(const IpPrefix& dst) {
    checkPrefix(dst, "removeRoute");
    int rc = 0;
    if (dst.addr.isV4()) {
        auto key = lpmKey<ars_lpm_v4>(dst);
        rc = bpf_map_delete_elem(routesV4Fd_, &key);
    } else {
        auto key = lpmKey<ars_lpm_v6>(dst);
        rc = bpf_map_delete_elem(routesV6Fd_, &key);
    }
    if (rc != 0 && errno != ENOENT) fail("removeRoute " + dst.str(), errno);
}

void BpfDatapath::setPortBand(int ifindex, uint8_t band) {
    if (band > kBestBand) {
        throw std::invalid_argument("ARS data path: setPortBand ifindex " +
                                    std::to_string(ifindex) + ": band " + std::to_string(band) +
                                    " is not in 0..7");
    }
    auto key = static_cast<uint32_t>(ifindex);
    if (bpf_map_update_elem(bandFd_, &key, &band, BPF_ANY) != 0)
        fail("setPortBand ifindex " + std::to_string(ifindex), errno);
}

void BpfDatapath::setPortRate(int ifindex, uint64_t bytesPerSecond) {
    auto key = static_cast<uint32_t>(ifindex);
    if (bpf_map_update_elem(rateFd_, &key, &bytesPerSecond, BPF_ANY) != 0)
        fail("setPortRate ifindex " + std::to_string(ifindex), errno);
}

void BpfDatapath::setPortBacklog(int ifindex, uint64_t bytes, uint64_t atNs) {
    auto key = static_cast<uint32_t>(ifindex);
    ars_port_backlog value{bytes, atNs};
    if (bpf_map_update_elem(backlogFd_, &key, &value, BPF_ANY) != 0)
        fail("setPortBacklog ifindex " + std::to_string(ifindex), errno);
}

void BpfDatapath::setPinned(int ifindex, bool pinned) {
    auto key = static_cast<uint32_t>(ifindex);
    uint8_t one = 1;
    int rc = pinned ? bpf_map_update_elem(pinnedFd_, &key, &one, BPF_ANY)
                    : bpf_map_delete_elem(pinnedFd_, &key);
    if (rc != 0 && !(errno == ENOENT && !pinned))
        fail("setPinned ifindex " + std::to_string(ifindex), errno);
}

void BpfDatapath::attach(int ifindex) {
    bpf_tc_hook hook = ingressHook(ifindex);
    if (int err = bpf_tc_hook_create(&hook); err != 0 && err != -EEXIST)
        fail("creating clsact on ifindex " + std::to_string(ifindex), err);
    bpf_tc_opts opts = ourFilter();
    opts.prog_fd = progFd_;
    opts.flags = BPF_TC_F_REPLACE;  // ours from an earlier run or call: replaced in place
    if (int err = bpf_tc_attach(&hook, &opts); err != 0)
        fail("attaching to the ingress of ifindex " + std::to_string(ifindex), err);
    attached_.insert(ifindex);
}

void BpfDatapath::detach(int ifindex) {
    attached_.erase(ifindex);
    bpf_tc_hook hook = ingressHook(ifindex);
    bpf_tc_opts opts = ourFilter();
    if (int err = bpf_tc_detach(&hook, &opts); err != 0 && !nothingThere(err))
        fail("detaching from ifindex " + std::to_string(ifindex), err);
}

bool BpfDatapath::detachLeftover(int ifindex) {
    bpf_tc_hook hook = ingressHook(ifindex);
    bpf_tc_opts opts = ourFilter();
    if (bpf_tc_query(&hook, &opts) != 0) return false;
    // Ours only if the program there is an ARS program: the handle and priority alone could
    // be someone else's choice too.
    int fd = bpf_prog_get_fd_by_id(opts.prog_id);
    if (fd < 0) return false;
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    bool ours = bpf_obj_get_info_by_fd(fd, &info, &len) == 0 &&
                std::strncmp(info.name, kProgramName, sizeof(info.name)) == 0;
    close(fd);
    if (!ours) return false;
    bpf_tc_opts del = ourFilter();
    return bpf_tc_detach(&hook, &del) == 0;
}

DatapathCounters BpfDatapath::counters() const {
    int cpus = libbpf_num_possible_cpus();
    if (cpus <= 0) fail("counting CPUs", cpus);
    std::vector<uint64_t> perCpu(static_cast<size_t>(cpus));
    uint64_t sums[ARS_CNT_MAX] = {};
    for (uint32_t slot = 0; slot < ARS_CNT_MAX; ++slot) {
        if (bpf_map_lookup_elem(countersFd_, &slot, perCpu.data()) != 0)
            fail("reading ars_counters", errno);
        for (uint64_t v : perCpu) sums[slot] += v;
    }
    return {sums[ARS_CNT_STEERED], sums[ARS_CNT_PASSED], sums[ARS_CNT_NEW_FLOWLETS],
            sums[ARS_CNT_MOVED]};
}

BpfDatapath::TestRun BpfDatapath::testRun(const std::vector<uint8_t>& frame, int ingressIfindex,
                                          uint32_t gsoSegs, uint32_t gsoSize) const {
    TestRun out;
    out.frame.resize(frame.size() + 256);  // room for a program that grows the packet
    __sk_buff ctx{};
    ctx.ingress_ifindex = static_cast<uint32_t>(ingressIfindex);
    ctx.gso_segs = gsoSegs;
    ctx.gso_size = gsoSize;
    bpf_test_run_opts opts{};
    opts.sz = sizeof(opts);
    opts.data_in = frame.data();
    opts.data_size_in = static_cast<uint32_t>(frame.size());
    opts.data_out = out.frame.data();
    opts.data_size_out = static_cast<uint32_t>(out.frame.size());
    opts.ctx_in = &ctx;
    opts.ctx_size_in = sizeof(ctx);
    opts.repeat = 1;
    if (bpf_prog_test_run_opts(progFd_, &opts) != 0) fail("BPF_PROG_TEST_RUN", errno);
    out.frame.resize(opts.data_size_out);
    out.action = static_cast<int>(opts.retval);
    return out;
}

std::vector<BpfDatapath::FlowSlot> BpfDatapath::flows() const {
    std::vector<FlowSlot> out;
    for (uint32_t slot = 0; slot < maxFlows_; ++slot) {
        ars_flow f{};
        if (bpf_map_lookup_elem(flowsFd_, &slot, &f) != 0) fail("reading ars_flows", errno);
        if (f.ifindex == 0) continue;
        out.push_back({slot, f.last_seen_ns, static_cast<int>(f.ifindex), f.nh_index});
    }
    return out;
}

}  // namespace twinrail::ars
