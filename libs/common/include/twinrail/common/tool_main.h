// The shared shape of the command-line tools' main(): --help anywhere prints the usage,
// a UsageError prints its message and the usage (64), a refused config or plan file
// (ConfigFileError) its message (78), a bad input (std::invalid_argument) its message (65),
// anything else its message (70).
#pragma once

#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>

#include "twinrail/common/sysexits.h"

namespace twinrail {

struct UsageError {
    std::string message;
};

// A file the tool was given to follow (a plan) that it refuses: a name outside the
// grammar, a field it cannot read. sysexits' EX_CONFIG, as the daemons' config errors.
struct ConfigFileError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

template <typename Body>
int toolMain(int argc, char** argv, const char* name, const char* usage, Body body) {
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::cout << usage;
            return exitcode::kOk;
        }
    }
    try {
        return body();
    } catch (const UsageError& e) {
        std::cerr << name << ": " << e.message << "\n" << usage;
        return exitcode::kUsage;
    } catch (const ConfigFileError& e) {
        std::cerr << name << ": " << e.what() << "\n";
        return exitcode::kConfig;
    } catch (const std::invalid_argument& e) {
        std::cerr << name << ": " << e.what() << "\n";
        return exitcode::kDataErr;
    } catch (const std::exception& e) {
        std::cerr << name << ": " << e.what() << "\n";
        return exitcode::kSoftware;
    }
}

}  // namespace twinrail
