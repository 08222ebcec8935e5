#include "twinrail/lab/ecn_marker.h"

#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <stdexcept>

#include "twinrail/common/unique_fd.h"
#include "twinrail/lab/shell.h"

namespace twinrail::lab {
namespace {

// The values bpf/ecn_mark.c carries in .rodata until they are patched.
constexpr uint64_t kRateMagic = 0x74776e7261696c31ULL;
constexpr uint64_t kMarkAfterMagic = 0x74776e7261696c32ULL;
constexpr int kPref = 40000;  // after anything else on the port's egress

// bpf/ecn_mark.c struct port_state.
struct PortState {
    uint64_t backlogNs, lastNs, ect, marked;
};

void patch(std::string& object, uint64_t magic, uint64_t value) {
    std::string from(reinterpret_cast<const char*>(&magic), sizeof magic);
    auto at = object.find(from);
    if (at == std::string::npos || object.find(from, at + 1) != std::string::npos)
        throw std::logic_error("ecn_mark.o: the constant to patch is not there exactly once");
    std::memcpy(object.data() + at, &value, sizeof value);
}

long bpf(int cmd, bpf_attr& attr) {
    return ::syscall(__NR_bpf, cmd, &attr, sizeof attr);
}

using Fd = UniqueFd;

}  // namespace

void attachEcnMarker(const std::string& ns, const std::string& port, double mbit,
                     std::chrono::microseconds markAfter) {
    std::string object(ecnMarkObject());
    patch(object, kRateMagic, static_cast<uint64_t>(1e12 * 8 / (mbit * 1e6)));
    patch(object, kMarkAfterMagic, static_cast<uint64_t>(markAfter.count()) * 1000);
    auto path = std::filesystem::temp_directory_path() /
                ("twinrail-ecn-mark-" + std::to_string(::getpid()) + "-" + ns + "-" + port + ".o");
    std::ofstream(path, std::ios::binary) << object;
    Argv in{"ip", "netns", "exec", ns};
    auto tc = [&in](Argv args) {
        Argv all = in;
        all.insert(all.end(), args.begin(), args.end());
        return run(all);
    };
    tc({"tc", "qdisc", "add", "dev", port, "clsact"});  // fails harmlessly when it is there
    auto r = tc({"tc", "filter", "replace", "dev", port, "egress", "pref", std::to_string(kPref),
                 "handle", "1", "bpf", "direct-action", "obj", path.string(), "sec", "ecn"});
    std::filesystem::remove(path);
    if (r.rc != 0) throw std::runtime_error("ECN marker on " + ns + ":" + port + ": " + r.err);
}

std::optional<EcnCounts> readEcnMarks(const std::string& ns, const std::string& port) {
    auto shown = run({"ip", "netns", "exec", ns, "tc", "filter", "show", "dev", port, "egress",
                      "pref", std::to_string(kPref)});
    static const std::regex kProgId(R"(\[ecn\].* id ([0-9]+) )");
    std::smatch m;
    if (shown.rc != 0 || !std::regex_search(shown.out, m, kProgId)) return std::nullopt;
    bpf_attr attr{};
    attr.prog_id = static_cast<uint32_t>(std::stoul(m[1].str()));
    Fd prog(bpf(BPF_PROG_GET_FD_BY_ID, attr));
    if (prog.get() < 0) return std::nullopt;
    std::array<uint32_t, 4> mapIds{};
    bpf_prog_info info{};
    info.nr_map_ids = mapIds.size();
    info.map_ids = reinterpret_cast<uint64_t>(mapIds.data());
    attr = {};
    attr.info.bpf_fd = static_cast<uint32_t>(prog.get());
    attr.info.info_len = sizeof info;
    attr.info.info = reinterpret_cast<uint64_t>(&info);
    if (bpf(BPF_OBJ_GET_INFO_BY_FD, attr) != 0) return std::nullopt;
    // Its maps: ecn_state and .rodata; the state is the one whose values are PortState.
    for (uint32_t i = 0; i < std::min<uint32_t>(info.nr_map_ids, mapIds.size()); ++i) {
        attr = {};
        attr.map_id = mapIds[i];
        Fd map(bpf(BPF_MAP_GET_FD_BY_ID, attr));
        if (map.get() < 0) continue;
        bpf_map_info mi{};
        attr = {};
        attr.info.bpf_fd = static_cast<uint32_t>(map.get());
        attr.info.info_len = sizeof mi;
        attr.info.info = reinterpret_cast<uint64_t>(&mi);
        if (bpf(BPF_OBJ_GET_INFO_BY_FD, attr) != 0 || mi.value_size != sizeof(PortState)) continue;
        uint32_t key = 0;
        PortState st{};
        attr = {};
        attr.map_fd = static_cast<uint32_t>(map.get());
        attr.key = reinterpret_cast<uint64_t>(&key);
        attr.value = reinterpret_cast<uint64_t>(&st);
        if (bpf(BPF_MAP_LOOKUP_ELEM, attr) != 0) return std::nullopt;
        return EcnCounts{st.ect, st.marked};
    }
    return std::nullopt;
}

}  // namespace twinrail::lab
