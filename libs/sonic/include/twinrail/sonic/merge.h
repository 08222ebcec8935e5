// An overlay config_db.json onto a base one, as `config load` layers a file onto
// CONFIG_DB: table by table, row by row, field by field. A table or row only in one of
// them is kept; a row in both keeps the base's fields and takes the overlay's (an
// overlay field replaces the base's value, a new field extends the row). Nothing is
// deleted: to drop a row, leave it out of the base.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "twinrail/sonic/problem.h"

namespace twinrail::sonic {

struct Merge {
    nlohmann::json merged = nlohmann::json::object();
    std::vector<Problem> problems;  // what was not an object where one was needed
};

Merge mergeConfigDb(const nlohmann::json& base, const nlohmann::json& overlay);

}  // namespace twinrail::sonic
