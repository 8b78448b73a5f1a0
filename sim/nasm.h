// Assembling guest programs with NASM (a runtime dependency: Debian package nasm).
#pragma once
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/types.h"

namespace pmusim {

/// A flat binary and its labels (absolute values, as NASM's symbol map gives them).
struct AssembledProgram {
    std::vector<u8> bytes;
    std::map<std::string, u64> symbols;
};

/// NASM rejected the source. `what()` is NASM's own message list; `line` is the
/// first line NASM complained about (0 if none could be parsed).
struct NasmError : std::runtime_error {
    NasmError(const std::string& msg, std::string file, int line)
        : std::runtime_error(msg), file(std::move(file)), line(line) {}
    std::string file;
    int line;
};

/// The nasm executable is not installed.
struct NasmMissing : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Assembles `source` with `nasm -f bin`. Error messages and line numbers refer to
/// `display_name` and the lines of `source`. The source sets its own BITS and ORG;
/// `include_dir`, if not empty, is searched by %include. Never writes outside a
/// private temporary directory, which is removed.
AssembledProgram assemble_nasm(const std::string& source, const std::string& display_name,
                               const std::string& include_dir = "");

}  // namespace pmusim
