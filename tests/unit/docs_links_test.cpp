// Every relative link in README.md and docs/*.md goes somewhere: the file (or folder) it
// names exists, and a #fragment names a heading of the target (GitHub's anchors: the
// heading lowercased, punctuation dropped, spaces as '-', "-1", "-2"... for repeats).
// Inline links and images ([text](target), ![alt](target)) and reference definitions
// ([label]: target) are checked; code spans and fenced code blocks are not links.
// Absolute URLs (scheme:) are left alone.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kSource = TWINRAIL_SOURCE_DIR;

struct Link {
    int line = 0;
    std::string target;
};

std::string readFile(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

bool fenceLine(const std::string& line) {
    auto first = line.find_first_not_of(' ');
    return first != std::string::npos && first <= 3 &&
           (line.compare(first, 3, "```") == 0 || line.compare(first, 3, "~~~") == 0);
}

// `line` with its code spans blanked out, so a `[a](b)` inside one is not a link.
std::string withoutCode(const std::string& line) {
    std::string out = line;
    bool inCode = false;
    for (char& c : out) {
        if (c == '`') {
            inCode = !inCode;
            c = ' ';
        } else if (inCode) {
            c = ' ';
        }
    }
    return out;
}

// The target of a link as written: "path#frag", without <> and a "title".
std::string cleanTarget(std::string t) {
    while (!t.empty() && t.front() == ' ') t.erase(t.begin());
    if (!t.empty() && t.front() == '<') {
        auto close = t.find('>');
        return t.substr(1, close == std::string::npos ? std::string::npos : close - 1);
    }
    auto space = t.find(' ');
    if (space != std::string::npos) t = t.substr(0, space);
    return t;
}

std::vector<Link> linksOf(const std::string& text) {
    std::vector<Link> links;
    std::istringstream in(text);
    std::string raw;
    bool fenced = false;
    int lineNo = 0;
    while (std::getline(in, raw)) {
        ++lineNo;
        if (fenceLine(raw)) {
            fenced = !fenced;
            continue;
        }
        if (fenced) continue;
        std::string line = withoutCode(raw);
        // [label]: target
        auto first = line.find_first_not_of(' ');
        if (first != std::string::npos && line[first] == '[') {
            auto close = line.find("]:", first);
            if (close != std::string::npos && line.find(']', first) == close) {
                links.push_back({lineNo, cleanTarget(line.substr(close + 2))});
                continue;
            }
        }
        // [text](target), ![alt](target); nested brackets in the text are allowed.
        for (size_t at = line.find("]("); at != std::string::npos; at = line.find("](", at + 2)) {
            int depth = 1;
            size_t end = at + 2;
            for (; end < line.size() && depth > 0; ++end) {
                if (line[end] == '(') ++depth;
                if (line[end] == ')') --depth;
            }
            if (depth != 0) continue;
            links.push_back({lineNo, cleanTarget(line.substr(at + 2, end - 1 - (at + 2)))});
        }
    }
    return links;
}

bool absoluteUrl(const std::string& target) {
    auto colon = target.find(':');
    if (colon == std::string::npos || colon == 0) return false;
    for (size_t i = 0; i < colon; ++i) {
        char c = target[i];
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.')
            return false;
    }
    return target.find('/') == std::string::npos || target.find('/') > colon;
}

// GitHub's anchor for a heading's text.
std::string slug(const std::string& heading) {
    std::string out;
    for (char c : heading) {
        auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u) || c == '-' || c == '_' || u >= 0x80) {
            out += static_cast<char>(std::tolower(u));
        } else if (c == ' ') {
            out += '-';
        }
    }
    return out;
}

std::set<std::string> anchorsOf(const std::string& text) {
    std::set<std::string> anchors;
    std::map<std::string, int> seen;
    std::istringstream in(text);
    std::string line;
    bool fenced = false;
    while (std::getline(in, line)) {
        if (fenceLine(line)) {
            fenced = !fenced;
            continue;
        }
        if (fenced || line.empty() || line[0] != '#') continue;
        auto hashes = line.find_first_not_of('#');
        if (hashes == std::string::npos || hashes > 6 || line[hashes] != ' ') continue;
        std::string title = line.substr(hashes + 1);
        while (!title.empty() && (title.back() == ' ' || title.back() == '#')) title.pop_back();
        std::string base = slug(title);
        int n = seen[base]++;
        anchors.insert(n == 0 ? base : base + "-" + std::to_string(n));
    }
    return anchors;
}

// Problems with the links of one markdown file, as "file:line: link: why".
std::vector<std::string> checkFile(const fs::path& file) {
    std::vector<std::string> problems;
    const std::string name = fs::relative(file, kSource).string();
    for (const auto& link : linksOf(readFile(file))) {
        const std::string at = name + ":" + std::to_string(link.line) + ": (" + link.target + ")";
        if (link.target.empty()) {
            problems.push_back(at + " is empty");
            continue;
        }
        if (absoluteUrl(link.target)) continue;
        auto hash = link.target.find('#');
        std::string path = link.target.substr(0, hash);
        std::string fragment = hash == std::string::npos ? "" : link.target.substr(hash + 1);
        if (!path.empty() && path[0] == '/') {
            problems.push_back(at + " is an absolute path; links must be relative");
            continue;
        }
        fs::path target = path.empty() ? file : file.parent_path() / path;
        std::error_code ec;
        if (!fs::exists(target, ec)) {
            problems.push_back(at + ": " + fs::relative(target, kSource, ec).string() +
                               " does not exist");
            continue;
        }
        if (fragment.empty()) continue;
        if (target.extension() != ".md" || fs::is_directory(target)) {
            problems.push_back(at + ": a #fragment on a file that is not markdown");
            continue;
        }
        if (anchorsOf(readFile(target)).count(fragment) == 0) {
            problems.push_back(at + ": " + fs::relative(target, kSource).string() +
                               " has no heading #" + fragment);
        }
    }
    return problems;
}

std::vector<fs::path> markdownFiles() {
    std::vector<fs::path> files{kSource / "README.md"};
    for (const auto& entry : fs::directory_iterator(kSource / "docs"))
        if (entry.path().extension() == ".md") files.push_back(entry.path());
    return files;
}

std::string joined(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines) out += l + "\n";
    return out;
}

TEST(DocsLinks, EveryRelativeLinkResolves) {
    auto files = markdownFiles();
    ASSERT_GT(files.size(), 1U) << "no docs/*.md under " << kSource;
    std::vector<std::string> problems;
    size_t checked = 0;
    for (const auto& file : files) {
        ASSERT_TRUE(fs::exists(file)) << file;
        checked += linksOf(readFile(file)).size();
        auto p = checkFile(file);
        problems.insert(problems.end(), p.begin(), p.end());
    }
    EXPECT_GT(checked, 0U);
    EXPECT_TRUE(problems.empty()) << joined(problems);
}

// The checker itself, on files it writes into a scratch folder.
class DocsLinksChecker : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("twinrail-docs-links-" +
                std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_ / "docs");
        write("docs/target.md",
              "# Target: `twinrail`, the (first) one\n\n## Twice\n\n## Twice\n\n```\n# not a "
              "heading\n```\n");
        write("docs/figure.png", "png");
    }
    void TearDown() override { fs::remove_all(dir_); }

    void write(const std::string& name, const std::string& text) {
        std::ofstream(dir_ / name) << text;
    }
    std::vector<std::string> check(const std::string& text) {
        write("docs/page.md", text);
        return checkFile(dir_ / "docs/page.md");
    }

    fs::path dir_;
};

TEST_F(DocsLinksChecker, AcceptsGoodLinks) {
    auto problems = check(
        "[t](target.md), [a](target.md#target-twinrail-the-first-one), "
        "[b](target.md#twice-1), ![f](figure.png), [web](https://example.org/x#y), "
        "[self](#page), [dir](../docs)\n# Page\n`[code](missing.md)`\n"
        "```\n[fenced](missing.md)\n```\n[ref]: target.md#twice\n");
    EXPECT_EQ(problems, std::vector<std::string>{});
}

TEST_F(DocsLinksChecker, NamesAMissingFile) {
    auto problems = check("# Page\n\nsee [x](missing.md)\n");
    ASSERT_EQ(problems.size(), 1U);
    EXPECT_NE(problems[0].find(":3: (missing.md)"), std::string::npos) << problems[0];
    EXPECT_NE(problems[0].find("does not exist"), std::string::npos) << problems[0];
}

TEST_F(DocsLinksChecker, NamesAMissingHeading) {
    auto problems =
        check("[x](target.md#twice-2) [y](target.md#not-a-heading) [z](#nowhere)\n# Page\n");
    ASSERT_EQ(problems.size(), 3U) << joined(problems);
    EXPECT_NE(problems[0].find("has no heading #twice-2"), std::string::npos) << problems[0];
    EXPECT_NE(problems[1].find("has no heading #not-a-heading"), std::string::npos);
    EXPECT_NE(problems[2].find("has no heading #nowhere"), std::string::npos);
}

TEST_F(DocsLinksChecker, NamesAnAbsolutePathAndAFragmentOnAFigure) {
    auto problems = check("[x](/docs/target.md) ![f](figure.png#top)\n");
    ASSERT_EQ(problems.size(), 2U) << joined(problems);
    EXPECT_NE(problems[0].find("absolute path"), std::string::npos);
    EXPECT_NE(problems[1].find("not markdown"), std::string::npos);
}

}  // namespace
