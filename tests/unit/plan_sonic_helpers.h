// What the planner's SONiC tests share (plan_sonic_test.cpp, plan_sonic_yang_test.cpp,
// plan_sonic_routed_test.cpp): an HWSKU directory read as twinrail-plan reads it, and a
// plan built from a catalog model. A failure is reported where it happens, naming the
// directory or the request, so the test that called shows what it could not build.
#pragma once

#include <gtest/gtest.h>

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <variant>

#include "sku_dir.h"
#include "twinrail/plan/plan.h"
#include "twinrail/plan/sonic_sku.h"

namespace twinrail::plansonic_test {

namespace plan = twinrail::plan;

// The HWSKUs twinrail-plan ships (libs/plan/hwsku), one directory a model.
inline const std::filesystem::path kCatalog = TWINRAIL_PLAN_HWSKU;

// An empty SKU when the directory does not load: the test carries on and fails there.
inline plan::Sku sku(const std::filesystem::path& dir) {
    auto s = twinrail::plantool::loadSkuDir(dir);
    if (auto* e = std::get_if<twinrail::plantool::SkuLoadError>(&s)) {
        ADD_FAILURE() << e->message;
        return {};
    }
    return std::get<plan::Sku>(s);
}

// ../shared is beside the checkout on a developer's machine and in CI. Missing under CI
// (CI=true) is a failure; elsewhere the test says so and returns (the tree's own fixtures
// test the same code).
inline void sharedMissing(const std::string& what) {
    const char* ci = std::getenv("CI");
    if (ci != nullptr && std::string(ci) == "true") {
        ADD_FAILURE() << "CI=true and the shared fixtures are missing: " << what;
    } else {
        GTEST_SKIP() << "shared fixtures missing (not CI): " << what;
    }
}

// A HWSKU directory as a switch has it, put together in a fresh temp folder from SONiC's
// files: port_config.ini and hwsku.json of `skuDir`, the SKU's pg_profile_lookup.ini and the
// platform's platform.json from `platformDir` (the platform.json is placed in the
// SKU directory's parent, as on a switch). Returns the SKU directory.
inline std::filesystem::path assembleSku(const std::string& tag,
                                         const std::filesystem::path& skuDir,
                                         const std::filesystem::path& platformDir) {
    namespace fs = std::filesystem;
    char tmpl[] = "/tmp/twinrail-sku-XXXXXX";
    const fs::path root = ::mkdtemp(tmpl) != nullptr ? fs::path(tmpl) : fs::path("/tmp/x");
    const fs::path sku = root / tag / skuDir.filename();
    fs::create_directories(sku);
    for (const char* f : {"port_config.ini", "hwsku.json"})
        if (fs::exists(skuDir / f)) fs::copy_file(skuDir / f, sku / f);
    fs::copy_file(platformDir / "platform.json", sku.parent_path() / "platform.json");
    const fs::path lookup = platformDir / skuDir.filename() / "pg_profile_lookup.ini";
    if (fs::exists(lookup)) fs::copy_file(lookup, sku / "pg_profile_lookup.ini");
    return sku;
}

inline plan::Sku catalogSku(const std::string& model) {
    return sku(kCatalog / model);
}

inline plan::Request request(const std::string& model, int gpus,
                             plan::Attach attach = plan::Attach::Bond,
                             plan::Request::Lb lb = plan::Request::Lb::Ecmp) {
    plan::Request r;
    r.gpus = gpus;
    r.leafModel = *plan::findModel(model);
    r.attach = attach;
    r.lb = lb;
    return r;
}

// The plan of `r`; a sizing error is a failure of the calling test (std::get throws next).
inline plan::Plan build(const plan::Request& r) {
    auto p = plan::buildPlan(r);
    // The message is only streamed on failure, when p holds the error.
    EXPECT_TRUE(std::holds_alternative<plan::Plan>(p))
        << r.leafModel.name << " " << r.gpus << ": " << std::get<plan::SizingError>(p).message;
    return std::get<plan::Plan>(p);
}

inline plan::Plan build(const std::string& model, int gpus,
                        plan::Attach attach = plan::Attach::Bond,
                        plan::Request::Lb lb = plan::Request::Lb::Ecmp) {
    return build(request(model, gpus, attach, lb));
}

// Routed NICs (BGP from every NIC port to its leaf), `nicPorts` ports a NIC.
inline plan::Plan routedPlan(const std::string& model, int gpus, int nicPorts = 2) {
    plan::Request r = request(model, gpus, plan::Attach::Routed);
    r.nicPorts = nicPorts;
    return build(r);
}

}  // namespace twinrail::plansonic_test
