// External interrupts and NMI at instruction boundaries: IF, the STI and MOV SS
// shadows, HLT waiting for an interrupt, NMI blocking until IRET (SDM Vol. 3,
// 6.7.1, 6.8.1, 6.8.3; Vol. 2, HLT and STI).
#include <catch2/catch.hpp>

#include "sim/nasm.h"
#include "sim/presets.h"

using namespace pmusim;

namespace {

constexpr u64 kRes = 0x20000;

/// A long64 machine running `body` at 0x1000; vector 0x40 and NMI go to a handler
/// that appends (RAX, RBX, return RIP) to the results area and counts in R15.
struct Fixture {
    Machine m;
    AssembledProgram prog;
    explicit Fixture(const std::string& body) {
        prog = assemble_nasm("bits 64\norg 0x1000\n" + body + R"(
        handler:
            mov rdi, r15
            shl rdi, 5
            mov [0x20000 + rdi], rax
            mov [0x20008 + rdi], rbx
            mov rsi, [rsp]
            mov [0x20010 + rdi], rsi
            inc r15
            iretq
        )", "interrupts.asm");
        m.load(0x1000, prog.bytes.data(), prog.bytes.size());
        apply_preset(m, StartPreset::kLong64, 0x1000);
        set_idt_gate(m, 0x40, prog.symbols.at("handler"));
        set_idt_gate(m, vec::NMI, prog.symbols.at("handler"));
    }
    u64 res(unsigned record, unsigned field) {
        u64 v = 0;
        m.peek(kRes + record * 32 + field * 8, &v, 8);
        return v;
    }
    u64 sym(const char* s) { return prog.symbols.at(s); }
};

}  // namespace

TEST_CASE("a raised interrupt waits while IF = 0 and is taken right after STI's shadow") {
    Fixture f(R"(
            cli
            mov eax, 1
            mov ebx, 2
            sti
        after_sti:
            mov eax, 3          ; runs inside the STI shadow
        taken_here:
            mov ebx, 4
            cli
            hlt)");
    f.m.raise_interrupt(0x40);
    const RunResult r = f.m.run(RunLimits{1000});
    REQUIRE(r.reason == StopReason::kHalt);
    REQUIRE(f.m.cpu().gpr[R15] == 1);
    CHECK(f.res(0, 0) == 3);  // the instruction after STI completed first
    CHECK(f.res(0, 1) == 2);  // ... but not the next one
    CHECK(f.res(0, 2) == f.sym("taken_here"));
}

TEST_CASE("MOV SS holds a pending interrupt for one instruction") {
    Fixture f(R"(
            mov cx, ss
            mov eax, 1
            mov ebx, 2
        mov_ss:
            mov ss, cx
            mov eax, 5          ; in the MOV SS shadow
        taken_here:
            mov ebx, 6
            cli
            hlt)");
    f.m.cpu().set_rflags(f.m.cpu().rflags() | kIF);
    // The line goes up at the boundary right after MOV SS (the 4th instruction).
    f.m.schedule(4, [&] { f.m.raise_interrupt(0x40); });
    const RunResult r = f.m.run(RunLimits{1000});
    REQUIRE(r.reason == StopReason::kHalt);
    REQUIRE(f.m.cpu().gpr[R15] == 1);
    CHECK(f.res(0, 0) == 5);
    CHECK(f.res(0, 1) == 2);
    CHECK(f.res(0, 2) == f.sym("taken_here"));
}

TEST_CASE("HLT waits for an interrupt and resumes after it") {
    Fixture f(R"(
            sti
            mov ebx, 7
            hlt
        resumed:
            mov eax, 9
            cli
            hlt)");
    // Nothing is pending when HLT executes; a device raises the line 50 time units later.
    f.m.schedule(50, [&] { f.m.raise_interrupt(0x40); });
    const RunResult r = f.m.run(RunLimits{1000});
    REQUIRE(r.reason == StopReason::kHalt);
    REQUIRE(f.m.cpu().gpr[R15] == 1);
    CHECK(f.res(0, 2) == f.sym("resumed"));  // the return address is the instruction after HLT
    CHECK(f.m.cpu().gpr[RAX] == 9);
    CHECK(r.rip == f.sym("resumed") + 5 + 1 + 1);
    CHECK(f.m.now() >= 50);
}

TEST_CASE("HLT with IF = 0 and no NMI stops the run") {
    Fixture f("cli\nhlt");
    const RunResult r = f.m.run(RunLimits{100});
    CHECK(r.reason == StopReason::kHalt);
    CHECK(r.rip == 0x1002);
}

TEST_CASE("NMI ignores IF, and a second NMI waits until the handler's IRET") {
    Fixture f(R"(
            cli
            mov eax, 1
            mov ebx, 2
            mov eax, 3
            hlt)");
    f.m.raise_nmi();
    f.m.run(RunLimits{2});  // NMI taken before the first instruction; handler runs 1 insn
    f.m.raise_nmi();        // raised while the first NMI handler runs: blocked until IRETQ
    const RunResult r = f.m.run(RunLimits{1000});
    CHECK(f.m.cpu().gpr[R15] == 2);
    CHECK(f.res(0, 2) == 0x1000);          // first NMI: before CLI
    CHECK(f.res(1, 2) == 0x1000);          // second NMI: right after the first IRETQ, same place
    CHECK(r.reason == StopReason::kHalt);  // IF = 0, so HLT ends the run
}

TEST_CASE("higher interrupt vectors are accepted first") {
    Fixture f(R"(
            sti
            nop
            nop
            cli
            hlt)");
    set_idt_gate(f.m, 0x30, f.sym("handler"));
    std::vector<u8> order;
    f.m.cpu().events.subscribe(EventKind::kInterrupt, [&](const Event& e) { order.push_back(e.vector); });
    f.m.raise_interrupt(0x30);
    f.m.raise_interrupt(0x40);
    f.m.run(RunLimits{1000});
    REQUIRE(order.size() == 2);
    CHECK(order[0] == 0x40);
    CHECK(order[1] == 0x30);
}
