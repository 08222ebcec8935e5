// Aligned text tables for people (status and show commands); JSON is for scripts.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace twinrail {

// The first row is the header. Columns are as wide as their widest cell, two spaces apart.
inline std::string formatTable(const std::vector<std::vector<std::string>>& rows) {
    std::vector<size_t> width;
    for (const auto& r : rows) {
        for (size_t i = 0; i < r.size(); ++i) {
            if (width.size() <= i) width.push_back(0);
            width[i] = std::max(width[i], r[i].size());
        }
    }
    std::string out;
    for (const auto& r : rows) {
        std::string line;
        for (size_t i = 0; i < r.size(); ++i) {
            line += r[i];
            if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
        }
        out += line + "\n";
    }
    return out;
}

}  // namespace twinrail
