// `twinrail sonic-check FILE [--base FILE]` and the daemons' --check-config on SONiC: a
// config_db.json document, merged onto a base, translated by SONiC's rules and validated
// with libyang against twinrail's YANG modules and the stubs of SONiC's PORT and VLAN
// (libs/sonic). The input is the overlay, or base NUL overlay. Checks: no UB or crash on
// any bytes; a refused merge names its document; every problem has a message and names a
// table the input has (or none, for the document itself); a table without a model is one
// of the input's tables and has no model; a clean report has no problems.
#include <cstdlib>
#include <set>
#include <string>

#include "fuzz_util.h"
#include "twinrail/sonic/check.h"
#include "twinrail/sonic/merge.h"
#include "twinrail/sonic/yang_context.h"

using twinrail::fuzz::check;
namespace sonic = twinrail::sonic;

namespace {

struct Models {
    sonic::YangContext yang;
    sonic::SchemaModel schema;
    Models() {
        for (const char* dir : {TWINRAIL_FUZZ_YANG_STUBS, TWINRAIL_FUZZ_PROTO_DIR}) {
            if (!yang.loadDirectory(dir).empty()) {
                std::fprintf(stderr, "sonic_check_fuzz: cannot load %s\n", dir);
                std::abort();
            }
        }
        schema = yang.schemaModel();
    }
};

const Models& models() {
    static const Models m;
    return m;
}

std::set<std::string> tablesOf(const nlohmann::json& doc) {
    std::set<std::string> out;
    if (doc.is_object())
        for (const auto& [table, rows] : doc.items()) out.insert(table);
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const Models& m = models();
    std::string input(reinterpret_cast<const char*>(data), size);
    auto nul = input.find('\0');
    auto overlay = nlohmann::json::parse(nul == std::string::npos ? input : input.substr(nul + 1),
                                         nullptr, false);
    if (overlay.is_discarded()) return 0;  // the CLI refuses it before: not JSON
    // Never copied: a copy recurses, and depth is what checkConfigDb refuses first.
    const nlohmann::json* doc = &overlay;
    sonic::Merge merged;
    if (nul != std::string::npos) {
        auto base = nlohmann::json::parse(input.substr(0, nul), nullptr, false);
        if (base.is_discarded()) return 0;
        merged = sonic::mergeConfigDb(base, overlay);
        if (!merged.problems.empty()) {
            for (const auto& p : merged.problems)
                check(!p.message.empty(), "a refused merge without a message");
            return 0;
        }
        doc = &merged.merged;
    }
    auto report = sonic::checkConfigDb(m.yang, m.schema, *doc, 5);
    const auto tables = tablesOf(*doc);
    for (const auto& p : report.problems) {
        check(!p.message.empty(), "a problem without a message");
        check(p.table.empty() || tables.count(p.table) == 1 || m.schema.table(p.table) != nullptr,
              "a problem in a table the document does not have");
    }
    for (const auto& t : report.tablesWithoutModel) {
        check(tables.count(t) == 1, "a missing model for a table the document does not have");
        check(m.schema.table(t) == nullptr, "a table with a model reported without one");
    }
    check(report.ok() == (report.problems.empty() && report.tablesWithoutModel.empty()),
          "ok() disagrees with the report");
    return 0;
}
