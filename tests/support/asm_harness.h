// Test support: assemble NASM snippets and run them on a fresh Machine.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "sim/machine.h"

namespace pmusim::test {

/// Guest layout used by run_asm: code at kCodeBase, the stack below kStackTop,
/// scratch data at kDataBase (all identity-mapped, flat segments, CPL 0).
constexpr u64 kCodeBase = 0x1000;
constexpr u64 kDataBase = 0x20000;
constexpr u64 kStackTop = 0x80000;

/// Assembles `source` with `nasm -f bin` as `bits`-bit code at origin `org`.
/// Throws std::runtime_error with NASM's messages on failure.
std::vector<u8> assemble(int bits, const std::string& source, u64 org = kCodeBase);

/// A machine with `source` loaded at kCodeBase in flat `bits`-bit mode, all
/// general registers 0 except RSP = kStackTop (0xFFF0 in 16-bit code), ready to run.
std::unique_ptr<Machine> machine_with(int bits, const std::string& source);

/// Runs `source` (which should end in HLT) for at most `max` instructions.
struct AsmResult {
    std::unique_ptr<Machine> machine;
    RunResult run;
    Cpu& cpu() { return machine->cpu(); }
    u64 reg(Gpr r) { return machine->cpu().gpr[r]; }
    u64 mem64(u64 pa) { u64 v = 0; machine->peek(pa, &v, 8); return v; }
};
AsmResult run_asm(int bits, const std::string& source, u64 max = 1'000'000);

}  // namespace pmusim::test
