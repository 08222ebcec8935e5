// Data-driven check of the INT parsers against directories of vectors: NAME.hex (the UDP
// payload, hex) + NAME.expect.json, listed by index.json ("vectors" and "malformed").
// Runs over our own vectors (tests/fixtures/int-reports, made by make_vectors.py from the
// spec) and, when present, the shared ones next to the checkout. Nothing is hard-coded
// per vector: a new directory of the same shape is checked by adding an instantiation.
//
// What each expect means:
//   accept        parses, and every field the JSON lists comes out as listed; metadata
//                 the JSON does not list must not be decoded either
//   reject        refused, with an error naming a field and an offset inside the datagram
//                 (and the ones the JSON gives as error_offset / error_field)
//   nonconformant refused by the strict parser (spec_strict_verdict); the group header,
//                 which holds either way, must still read through parseReportGroupHeader
// `kind` picks the parser: a Telemetry Report, or an INT v2.1 data packet (parseIntShim).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "twinrail/telemetry/int_report.h"
#include "twinrail/telemetry/int_shim.h"

namespace twinrail::telemetry {
namespace {

using nlohmann::json;

constexpr const char* kReportKind = "telemetry-report-v2.0-udp-payload";
constexpr const char* kDataKind = "int-v2.1-data-packet-udp-payload";

struct Vector {
    std::string dir;
    std::string name;  // empty: the directory (or its index) is missing
    bool required = false;
};

void PrintTo(const Vector& v, std::ostream* os) {
    *os << v.dir << "/" << v.name;
}

std::vector<Vector> loadIndex(const std::string& dir, bool required) {
    std::ifstream in(dir + "/index.json");
    json index = in ? json::parse(in, nullptr, false) : json();
    std::vector<Vector> out;
    for (const char* list : {"vectors", "malformed"}) {
        if (!index.is_object() || !index.contains(list)) continue;
        for (const auto& name : index[list])
            out.push_back({dir, name.get<std::string>(), required});
    }
    if (out.empty()) out.push_back({dir, "", required});
    return out;
}

std::string testName(const testing::TestParamInfo<Vector>& info) {
    std::string s = info.param.name.empty() ? "no_index" : info.param.name;
    for (char& c : s) {
        if (std::isalnum(static_cast<unsigned char>(c)) == 0) c = '_';
    }
    return s;
}

std::optional<std::vector<uint8_t>> readHex(const std::string& path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    std::string digits;
    for (char c; in.get(c);) {
        if (std::isxdigit(static_cast<unsigned char>(c)) != 0) digits += c;
    }
    if (digits.size() % 2 != 0) return std::nullopt;
    std::vector<uint8_t> out;
    for (size_t i = 0; i < digits.size(); i += 2)
        out.push_back(static_cast<uint8_t>(std::stoul(digits.substr(i, 2), nullptr, 16)));
    return out;
}

// Numbers come as JSON numbers or as "0x..." strings.
uint64_t num(const json& v) {
    if (v.is_string()) return std::stoull(v.get<std::string>(), nullptr, 0);
    if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
    return v.get<uint64_t>();
}

std::string hexOf(std::span<const uint8_t> d) {
    std::ostringstream s;
    for (uint8_t b : d) s << std::hex << (b >> 4) << (b & 0xf);
    return s.str();
}

// Each field a vector may list for one node's metadata, how wide it is, and whether all
// ones reads as "unavailable" (nullopt) rather than as a value.
struct HopField {
    const char* key;
    std::optional<uint64_t> (*get)(const IntHop&);
    int bits;
    bool allOnesUnavailable;
};

template <typename T>
std::optional<uint64_t> widen(const std::optional<T>& v) {
    return v ? std::optional<uint64_t>(*v) : std::nullopt;
}

const std::vector<HopField>& hopFields() {
    static const std::vector<HopField> kFields = {
        {"node_id", [](const IntHop& h) { return widen(h.nodeId); }, 32, true},
        {"l1_ingress_if", [](const IntHop& h) { return widen(h.ingressPort); }, 16, true},
        {"l1_egress_if", [](const IntHop& h) { return widen(h.egressPort); }, 16, true},
        {"hop_latency", [](const IntHop& h) { return widen(h.hopLatency); }, 32, true},
        {"queue_id", [](const IntHop& h) { return widen(h.queueId); }, 8, true},
        {"queue_occupancy", [](const IntHop& h) { return widen(h.queueOccupancy); }, 24, true},
        {"ingress_ts", [](const IntHop& h) { return widen(h.ingressTimestamp); }, 64, true},
        {"egress_ts", [](const IntHop& h) { return widen(h.egressTimestamp); }, 64, true},
        {"l2_ingress_if", [](const IntHop& h) { return widen(h.l2IngressIf); }, 32, true},
        {"l2_egress_if", [](const IntHop& h) { return widen(h.l2EgressIf); }, 32, true},
        {"egress_tx_util", [](const IntHop& h) { return widen(h.egressTxUtil); }, 32, true},
        {"buffer_id", [](const IntHop& h) { return widen(h.bufferId); }, 8, true},
        {"buffer_occupancy", [](const IntHop& h) { return widen(h.bufferOccupancy); }, 24, true},
        // The drop word is unavailable only as a whole: checked below.
        {"drop_queue_id", [](const IntHop& h) { return widen(h.dropQueueId); }, 8, false},
        {"drop_reason", [](const IntHop& h) { return widen(h.dropReason); }, 8, false},
        {"drop_pad", [](const IntHop& h) { return widen(h.dropPadding); }, 16, false},
        {"checksum_complement", [](const IntHop& h) { return widen(h.checksumComplement); }, 32,
         false},
    };
    return kFields;
}

// `groupNode`: set for a report, whose metadata carries the group header's node id.
void checkHop(const json& m, const IntHop& h, std::optional<uint32_t> groupNode) {
    for (const auto& [key, value] : m.items()) {
        bool known = false;
        for (const auto& f : hopFields()) known = known || key == f.key;
        EXPECT_TRUE(known) << "the test does not know metadata field " << key;
    }
    bool dropWordAllOnes = m.contains("drop_queue_id") && num(m["drop_queue_id"]) == 0xff &&
                           m.contains("drop_reason") && num(m["drop_reason"]) == 0xff &&
                           m.value("drop_pad", 0xffff) == 0xffff;
    for (const auto& f : hopFields()) {
        SCOPED_TRACE(f.key);
        auto got = f.get(h);
        if (!m.contains(f.key)) {
            if (groupNode && std::string(f.key) == "node_id") {
                EXPECT_EQ(got, std::optional<uint64_t>(*groupNode));
            } else {
                EXPECT_FALSE(got) << "decoded " << *got << ", the vector lists no such field";
            }
            continue;
        }
        uint64_t want = num(m[f.key]);
        uint64_t allOnes = f.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << f.bits) - 1;
        bool unavailable =
            f.allOnesUnavailable ? want == allOnes : dropWordAllOnes && f.key[0] == 'd';
        if (unavailable) {
            EXPECT_FALSE(got) << "all ones must read as unavailable";
        } else {
            EXPECT_EQ(got, std::optional<uint64_t>(want));
        }
    }
}

template <typename T>
void expectField(const json& j, const char* key, T got) {
    if (j.contains(key)) {
        EXPECT_EQ(static_cast<uint64_t>(got), num(j[key])) << key;
    }
}

void expectBytes(const json& j, const char* key, std::span<const uint8_t> got) {
    if (j.contains(key)) {
        EXPECT_EQ(hexOf(got), j[key].get<std::string>()) << key;
    }
}

void checkError(const ParseError& e, const json& j, size_t size) {
    EXPECT_FALSE(e.field.empty()) << e.str();
    EXPECT_FALSE(e.what.empty());
    EXPECT_LE(e.offset, size) << e.str();
    if (j.contains("error_offset")) {
        EXPECT_EQ(e.offset, num(j["error_offset"])) << e.str();
    }
    if (j.contains("error_field")) {
        EXPECT_EQ(e.field, j["error_field"].get<std::string>());
    }
}

void checkGroup(const json& j, const ReportGroupHeader& g) {
    expectField(j, "ver", g.version);
    expectField(j, "hw_id", g.hwId);
    expectField(j, "seq", g.sequence);
    expectField(j, "node_id", g.nodeId);
}

void checkReport(const json& e, const IntReport& rep, std::span<const uint8_t> d, uint32_t nodeId) {
    expectField(e, "rep_type", rep.repType);
    expectField(e, "in_type", rep.inType);
    expectField(e, "report_length", rep.reportLength);
    expectField(e, "md_length", rep.mdLength);
    expectField(e, "rsvd", rep.reserved);
    if (e.contains("flags")) {
        const json& f = e["flags"];
        expectField(f, "D", rep.dropped);
        expectField(f, "Q", rep.congestedQueue);
        expectField(f, "F", rep.trackedFlow);
        expectField(f, "I", rep.intermediate);
    }
    expectField(e, "flags_nibble",
                (rep.dropped ? 8 : 0) | (rep.congestedQueue ? 4 : 0) | (rep.trackedFlow ? 2 : 0) |
                    (rep.intermediate ? 1 : 0));
    expectField(e, "inner_length_bytes", rep.innerBytes);
    expectBytes(e, "inner_hex", d.subspan(rep.innerOffset, rep.innerBytes));
    if (rep.repType != kRepTypeInt) return;
    expectField(e, "rep_md_bits", rep.repMdBits);
    expectField(e, "domain_specific_id", rep.domainSpecificId);
    expectField(e, "ds_md_bits", rep.dsMdBits);
    expectField(e, "ds_md_status", rep.dsMdStatus);
    expectBytes(e, "ds_metadata_hex", d.subspan(rep.dsMetadataOffset, rep.dsMetadataBytes));
    checkHop(e.value("metadata", json::object()), rep.metadata, nodeId);
}

void checkShim(const json& j, const IntShimPacket& p, std::span<const uint8_t> d) {
    expectField(j, "shim_type", p.type);
    expectField(j, "shim_npt", p.npt);
    expectField(j, "shim_length_words", p.lengthWords);
    expectField(j, "shim_npt_field", p.nptField);
    expectField(j, p.type == kShimTypeMd ? "md_ver" : "mx_ver", p.version);
    expectField(j, p.type == kShimTypeMd ? "md_D" : "mx_D", p.discard);
    expectField(j, "md_E", p.maxHopExceeded);
    expectField(j, "md_M", p.mtuExceeded);
    expectField(j, "hop_ml", p.hopMl);
    expectField(j, "remaining_hop_count", p.remainingHopCount);
    expectField(j, "instruction_bitmap", p.instructionBitmap);
    expectField(j, "domain_specific_id", p.domainSpecificId);
    expectField(j, "ds_instruction", p.dsInstruction);
    expectField(j, "ds_flags", p.dsFlags);
    expectField(j, "int_total_bytes_incl_shim", p.payloadOffset);
    const json hops = j.value("hops", json::array());
    ASSERT_EQ(p.hops.size(), hops.size());
    for (size_t i = 0; i < hops.size(); ++i) {
        SCOPED_TRACE("hop " + std::to_string(i));
        checkHop(hops[i], p.hops[i], std::nullopt);
    }
    auto trailing = d.subspan(p.payloadOffset);
    if (j.contains("trailing_payload")) {  // the payload as text
        EXPECT_EQ(std::string(trailing.begin(), trailing.end()),
                  j["trailing_payload"].get<std::string>());
    }
    expectBytes(j, "trailing_hex", trailing);
}

// A lenient reading of a nonconformant report can still hold a valid INT-MD stack in its
// truncated packet (Ethernet + IPv4 + UDP): check parseIntShim on it where the JSON says.
void checkEmbeddedIntMd(const json& j, std::span<const uint8_t> d) {
    if (!j.contains("embedded_int_md") || !j.contains("lenient_inner_offset_bytes")) return;
    SCOPED_TRACE("embedded INT-MD stack");
    size_t off = num(j["lenient_inner_offset_bytes"]);
    ASSERT_LE(off + 14 + 20 + 8, d.size());
    ASSERT_EQ((d[off + 12] << 8) | d[off + 13], 0x0800) << "only IPv4 inner packets handled";
    off += 14;
    ASSERT_EQ(d[off + 9], 17) << "only UDP inner packets handled";
    off += size_t{d[off] & 0x0fu} * 4 + 8;
    ASSERT_LE(off, d.size());
    auto r = parseIntShim(d.subspan(off));
    const auto* e = std::get_if<ParseError>(&r);
    ASSERT_EQ(e, nullptr) << e->str();
    json merged = j["embedded_int_md"];
    merged["hops"] = j.value("hops", json::array());
    checkShim(merged, std::get<IntShimPacket>(r), d.subspan(off));
}

class IntVectors : public testing::TestWithParam<Vector> {};

TEST_P(IntVectors, MatchesItsExpectation) {
    const Vector& v = GetParam();
    if (v.name.empty()) {
        if (v.required) FAIL() << "no vectors in " << v.dir << "/index.json";
        GTEST_SKIP() << v.dir << " is not there";
    }
    std::ifstream in(v.dir + "/" + v.name + ".expect.json");
    ASSERT_TRUE(in) << v.name << ".expect.json";
    const json j = json::parse(in, nullptr, false);
    ASSERT_TRUE(j.is_object()) << v.name << ".expect.json does not parse";
    auto bytes = readHex(v.dir + "/" + v.name + ".hex");
    ASSERT_TRUE(bytes) << v.name << ".hex";
    const std::span<const uint8_t> d(*bytes);
    expectField(j, "payload_length_bytes", d.size());
    const std::string expect = j.value("expect", "");
    const std::string kind = j.value("kind", "");
    const std::string verdict =
        expect == "nonconformant" ? j.value("spec_strict_verdict", "reject") : expect;
    ASSERT_TRUE(verdict == "accept" || verdict == "reject") << "expect " << expect;

    std::optional<ParseError> error;
    if (kind == kDataKind) {
        auto r = parseIntShim(d);
        if (auto* e = std::get_if<ParseError>(&r)) error = *e;
        if (verdict == "accept" && !error) checkShim(j, std::get<IntShimPacket>(r), d);
    } else {
        ASSERT_EQ(kind, kReportKind);
        auto r = parseTelemetryReport(d);
        if (auto* e = std::get_if<ParseError>(&r)) error = *e;
        if (verdict == "accept" && !error) {
            const auto& p = std::get<IntPacket>(r);
            checkGroup(j, p.group);
            expectField(j, "num_reports", p.reports.size());
            const json reports = j.contains("reports") ? j["reports"] : json::array({j});
            ASSERT_EQ(p.reports.size(), reports.size());
            for (size_t i = 0; i < reports.size(); ++i) {
                SCOPED_TRACE("report " + std::to_string(i));
                checkReport(reports[i], p.reports[i], d, p.group.nodeId);
            }
        }
        if (expect == "nonconformant") {
            auto g = parseReportGroupHeader(d);
            const auto* e = std::get_if<ParseError>(&g);
            ASSERT_EQ(e, nullptr) << e->str();
            checkGroup(j, std::get<ReportGroupHeader>(g));
            checkEmbeddedIntMd(j, d);
        }
    }
    // One line per vector, so a run over a new directory reads as a table.
    std::cout << "[ vector   ] " << v.name << ": expect " << expect << ", "
              << (error ? "rejected: " + error->str() : std::string("accepted")) << "\n";
    if (verdict == "accept") {
        EXPECT_FALSE(error) << error->str();
    } else {
        ASSERT_TRUE(error) << "accepted a vector that must be rejected";
        checkError(*error, j, d.size());
    }
}

INSTANTIATE_TEST_SUITE_P(Own, IntVectors,
                         testing::ValuesIn(loadIndex(TWINRAIL_INT_VECTORS_OWN, true)), testName);
INSTANTIATE_TEST_SUITE_P(Shared, IntVectors,
                         testing::ValuesIn(loadIndex(TWINRAIL_INT_VECTORS_SHARED, false)),
                         testName);

}  // namespace
}  // namespace twinrail::telemetry
