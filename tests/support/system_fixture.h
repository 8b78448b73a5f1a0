// Test support: a guest program in a start-state preset with recording exception handlers.
#pragma once
#include <string>
#include <vector>

#include "sim/machine.h"
#include "sim/nasm.h"
#include "sim/presets.h"

namespace pmusim::test {

/// Results area the recording handlers write: vector at +0x100, the stack pointer
/// they found (the pushed frame) at +0x108, CR2 at +0x110 (if recorded).
constexpr u64 kRes = 0x20000;

/// Runs `body` (NASM; entry label `start`, ends with `done: hlt`) at 0x1000 in `preset`.
/// Outside real mode, vectors 0-31 lead to recording handlers (`handlers` + 32 * vector)
/// that store what they saw at kRes and halt at `fault_halt`. The body may use RES
/// (= kRes), STACKP (rsp/esp) and ACC (rax/eax).
struct SystemFixture {
    struct Options {
        bool record_cr2 = false;     ///< handlers also store CR2 (needs CPL 0 handlers)
        bool int80_to_done = false;  ///< IDT vector 80h: DPL 3 gate to `done`
    };
    SystemFixture(StartPreset preset, const std::string& body, Options opt);
    SystemFixture(StartPreset preset, const std::string& body) : SystemFixture(preset, body, Options{}) {}

    Machine m;
    AssembledProgram prog;
    unsigned width;             ///< bytes per stack slot (2, 4, 8)
    std::vector<Event> events;  ///< exceptions and interrupts, in delivery order

    u64 sym(const std::string& s) const { return prog.symbols.at(s); }
    u64 phys(u64 pa, unsigned n = 8);
    u64 q(u64 off) { return phys(kRes + off); }
    void put(u64 pa, u64 v, unsigned n = 8) { m.load(pa, &v, n); }
    /// Writes GDT entry `index` of the preset's GDT, growing GDTR.limit to cover it.
    void gdt(unsigned index, u64 desc);
    /// Clears the P flag of IDT gate `v`.
    void gate_not_present(u8 v);
    RunResult run_raw() { return m.run(RunLimits{100000}); }
    /// Runs to HLT: -1 at `done`, else the vector a recording handler caught.
    /// Fails the test (REQUIRE) on any other stop.
    int run();
    /// Slot `i` of the stack at `sp`; frame(i): of the frame the handler found.
    u64 slot(u64 sp, unsigned i) { return phys(sp + i * width, width); }
    u64 frame(unsigned i) { return slot(phys(kRes + 0x108), i); }
    u64 cr2() { return phys(kRes + 0x110); }
};

}  // namespace pmusim::test
