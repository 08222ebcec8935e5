// What the planner's SONiC tests share (plan_sonic_test.cpp, plan_sonic_yang_test.cpp,
// plan_sonic_routed_test.cpp): an HWSKU directory read as twinrail-plan reads it, and a
// plan built from a catalog model. A failure is reported where it happens, naming the
// directory or the request, so the test that called shows what it could not build.
#pragma once

#include <gtest/gtest.h>

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
