// The local APIC in xAPIC mode (SDM Vol. 3, chapter 10): registers seen from guest
// programs on the long64 preset, the timer, priorities and EOI, self-IPIs, LVT
// masking, IA32_APIC_BASE relocation, and the performance-monitoring interrupt path
// driven from the host as the PMU model drives it. Section numbers are SDM Vol. 3.
#include <catch2/catch.hpp>

#include "models/apic/local_apic.h"
#include "sim/machine.h"
#include "sim/presets.h"
#include "tests/support/system_fixture.h"

using namespace pmusim;

namespace {

constexpr u64 RES = test::kRes;
constexpr u64 kLog = RES + 0x200;  ///< interrupt log: (vector, return RIP) pairs of 16 bytes

/// Guest prelude: R12 = APIC page, R15 = interrupts taken. `LOGGED v` defines
/// `vec_v`, a handler that logs (v, return RIP) at kLog + 16 * R15, counts in R15 and
/// writes EOI. Any label `vec_0xNN` becomes the IDT gate of vector NN.
const char* kPrelude = R"(
%define APIC_ID     0x20
%define APIC_VER    0x30
%define APIC_TPR    0x80
%define APIC_APR    0x90
%define APIC_PPR    0xA0
%define APIC_EOI    0xB0
%define APIC_LDR    0xD0
%define APIC_DFR    0xE0
%define APIC_SVR    0xF0
%define APIC_ISR    0x100
%define APIC_TMR    0x180
%define APIC_IRR    0x200
%define APIC_ESR    0x280
%define APIC_CMCI   0x2F0
%define APIC_ICRLO  0x300
%define APIC_ICRHI  0x310
%define APIC_TIMER  0x320
%define APIC_THERM  0x330
%define APIC_PERF   0x340
%define APIC_LINT0  0x350
%define APIC_LINT1  0x360
%define APIC_ERROR  0x370
%define APIC_TICR   0x380
%define APIC_TCCR   0x390
%define APIC_TDCR   0x3E0
%define LOG         (RES + 0x200)
%macro LOGGED 1
vec_%1:
    push rax
    push rdi
    mov rdi, r15
    shl rdi, 4
    mov qword [LOG + rdi], %1
    mov rax, [rsp + 16]
    mov [LOG + 8 + rdi], rax
    inc r15
    mov dword [r12 + APIC_EOI], 0
    pop rdi
    pop rax
    iretq
%endmacro
start:
    mov r12, 0xFEE00000
    xor r15d, r15d
)";

/// A long64 guest with a local APIC attached; records the time (Machine::now()) of
/// every accepted interrupt.
struct ApicFixture : test::SystemFixture {
    LocalApic apic;
    std::vector<std::pair<u8, u64>> taken;  ///< (vector, now) per accepted interrupt or NMI

    explicit ApicFixture(const std::string& body)
        : SystemFixture(StartPreset::kLong64, std::string(kPrelude) + body) {
        apic.attach(m);
        for (const auto& [name, addr] : prog.symbols)
            if (name.size() == 8 &&
                name.rfind("vec_0x", 0) == 0)  // not local labels (vec_0x50.keep)
                set_idt_gate(m, u8(std::stoul(name.substr(6), nullptr, 16)), addr);
        m.cpu().events.subscribe(EventKind::kInterrupt,
                                 [this](const Event& e) { taken.emplace_back(e.vector, m.now()); });
    }
    u64 log_vector(unsigned i) { return phys(kLog + 16 * i); }
    u64 log_rip(unsigned i) { return phys(kLog + 16 * i + 8); }
    u32 res32(u64 off) { return u32(phys(RES + off, 4)); }
    u64 r15() { return m.cpu().gpr[R15]; }
    /// Makes the run loop execute instruction by instruction (a retired-instruction
    /// subscriber), the other of its two loops; timing must not differ.
    void per_instruction_loop() {
        m.cpu().events.subscribe(EventKind::kInsnRetired, [](const Event&) {});
    }
};

}  // namespace

TEST_CASE("APIC registers after reset as the guest reads them", "[apic]") {
    // 10.4.7.1 (power-up state), 10.4.4 (IA32_APIC_BASE 0xFEE00900: BSP, enabled),
    // 10.4.6 (ID = CPUID.01H:EBX[31:24] = 0 in the generic profile), 10.4.8 (version
    // 14H, 7 LVT entries -> Max LVT Entry 6).
    ApicFixture f(R"(
    mov ecx, 0x1B
    rdmsr
    mov [RES + 0], eax
    mov [RES + 4], edx
    mov eax, [r12 + APIC_ID]
    mov [RES + 8], eax
    mov eax, [r12 + APIC_VER]
    mov [RES + 12], eax
    mov eax, [r12 + APIC_SVR]
    mov [RES + 16], eax
    mov eax, [r12 + APIC_DFR]
    mov [RES + 20], eax
    mov eax, [r12 + APIC_TIMER]
    mov [RES + 24], eax
    mov eax, [r12 + APIC_PERF]
    mov [RES + 28], eax
    mov eax, [r12 + APIC_CMCI]
    mov [RES + 32], eax
    mov eax, [r12 + APIC_LINT1]
    mov [RES + 36], eax
    mov eax, [r12 + APIC_TPR]
    mov [RES + 40], eax
    mov eax, [r12 + APIC_PPR]
    mov [RES + 44], eax
    mov eax, [r12 + APIC_TDCR]
    mov [RES + 48], eax
    mov eax, [r12 + APIC_TCCR]
    mov [RES + 52], eax
    movzx eax, word [r12 + APIC_VER + 2]   ; a 16-bit read of the version's upper half
    mov [RES + 56], eax
    mov eax, [r12 + APIC_VER + 4]          ; bytes 4-7 of a register slot
    mov [RES + 60], eax
done:
    hlt
)");
    REQUIRE(f.run() == -1);
    CHECK(f.res32(0) == 0xFEE00900);
    CHECK(f.res32(4) == 0);
    CHECK(f.res32(8) == 0);
    CHECK(f.res32(12) == 0x00060014);
    CHECK(f.res32(16) == 0x000000FF);
    CHECK(f.res32(20) == 0xFFFFFFFF);
    CHECK(f.res32(24) == 0x00010000);
    CHECK(f.res32(28) == 0x00010000);
    CHECK(f.res32(32) == 0x00010000);
    CHECK(f.res32(36) == 0x00010000);
    CHECK(f.res32(40) == 0);
    CHECK(f.res32(44) == 0);
    CHECK(f.res32(48) == 0);
    CHECK(f.res32(52) == 0);
    CHECK(f.res32(56) == 0x0006);
    CHECK(f.res32(60) == 0);
    CHECK(f.apic.apic_base_msr() == 0xFEE00900);
}

TEST_CASE("register write masks, software enable and the LVT masks it forces", "[apic]") {
    // 10.4.7.2: while SVR[8] = 0 every LVT mask is set and cannot be cleared.
    // 10.9: SVR bits 7:0 and 8 are writable. 10.6.2.2/10.6.2.3: LDR bits 31:24, DFR
    // bits 31:28 (27:0 read 1). 10.5.1: read-only and reserved LVT bits.
    ApicFixture f(R"(
    mov dword [r12 + APIC_TIMER], 0x00020040   ; unmask while software-disabled
    mov eax, [r12 + APIC_TIMER]
    mov [RES + 0], eax
    mov dword [r12 + APIC_SVR], 0xFFFFFFFF     ; enable; only bits 8:0 stick
    mov eax, [r12 + APIC_SVR]
    mov [RES + 4], eax
    mov dword [r12 + APIC_TIMER], 0xFFFFFFFF   ; timer: vector, mask, periodic only
    mov eax, [r12 + APIC_TIMER]
    mov [RES + 8], eax
    mov dword [r12 + APIC_PERF], 0xFFFEFFFF    ; perfmon: vector, delivery mode (mask clear)
    mov eax, [r12 + APIC_PERF]
    mov [RES + 12], eax
    mov dword [r12 + APIC_LINT0], 0xFFFFFFFF   ; LINT0: + polarity, trigger; remote IRR is RO
    mov eax, [r12 + APIC_LINT0]
    mov [RES + 16], eax
    mov dword [r12 + APIC_ERROR], 0xFFFFFFFF
    mov eax, [r12 + APIC_ERROR]
    mov [RES + 20], eax
    mov dword [r12 + APIC_LDR], 0xFFFFFFFF
    mov eax, [r12 + APIC_LDR]
    mov [RES + 24], eax
    mov dword [r12 + APIC_DFR], 0x0
    mov eax, [r12 + APIC_DFR]
    mov [RES + 28], eax
    mov dword [r12 + APIC_VER], 0               ; read-only: ignored
    mov eax, [r12 + APIC_VER]
    mov [RES + 32], eax
    mov dword [r12 + APIC_TDCR], 0xFFFFFFFF
    mov eax, [r12 + APIC_TDCR]
    mov [RES + 36], eax
    mov dword [r12 + APIC_ICRHI], 0xFFFFFFFF
    mov eax, [r12 + APIC_ICRHI]
    mov [RES + 40], eax
    mov dword [r12 + APIC_SVR], 0x0FF          ; software disable again: all LVTs masked
    mov eax, [r12 + APIC_PERF]
    mov [RES + 44], eax
    mov eax, [r12 + APIC_TIMER]
    mov [RES + 48], eax
done:
    hlt
)");
    REQUIRE(f.run() == -1);
    CHECK(f.res32(0) == 0x00030040);
    CHECK(f.res32(4) == 0x000001FF);
    CHECK(f.res32(8) == 0x000300FF);
    CHECK(f.res32(12) == 0x000007FF);
    CHECK(f.res32(16) == 0x0001A7FF);
    CHECK(f.res32(20) == 0x000100FF);
    CHECK(f.res32(24) == 0xFF000000);
    CHECK(f.res32(28) == 0x0FFFFFFF);
    CHECK(f.res32(32) == 0x00060014);
    CHECK(f.res32(36) == 0x0000000B);
    CHECK(f.res32(40) == 0xFF000000);
    CHECK(f.res32(44) == 0x000107FF);
    CHECK(f.res32(48) == 0x000300FF);
}

TEST_CASE("one-shot timer: HLT until it fires, handler writes EOI", "[apic][timer]") {
    // 10.5.4: the initial count is copied to the current count and counts down once
    // per `divisor` time units; at 0 the LVT timer vector is raised and a one-shot
    // timer stays at 0. Time unit = one instruction (or halted unit). The count starts
    // when the writing instruction retires.
    ApicFixture f(R"(
    mov dword [r12 + APIC_SVR], 0x1FF
    mov dword [r12 + APIC_TDCR], 0x0        ; divide by 2
    mov dword [r12 + APIC_TIMER], 0x40      ; vector 40h, one-shot, not masked
    sti
    mov dword [r12 + APIC_TICR], 50
armed:
    hlt
woken:
    mov eax, [r12 + APIC_TCCR]
    mov [RES + 0], eax
    mov eax, [r12 + APIC_ISR + 0x20]        ; after the handler's EOI
    mov [RES + 4], eax
    cli
done:
    hlt
vec_0x40:
    mov eax, [r12 + APIC_ISR + 0x20]        ; vectors 40h-5Fh
    mov [RES + 8], eax
    mov eax, [r12 + APIC_PPR]
    mov [RES + 12], eax
    inc r15
    mov dword [r12 + APIC_EOI], 0
    iretq
)");
    const bool per_insn = GENERATE(false, true);
    INFO("per-instruction loop: " << per_insn);
    if (per_insn) f.per_instruction_loop();
    f.m.set_stop_addresses({f.sym("armed")});
    REQUIRE(f.run_raw().reason == StopReason::kStopAddress);
    const u64 t0 = f.m.now();
    CHECK(t0 == 7);  // 2 prelude + 5 instructions: the count starts after the 7th retired
    CHECK(f.apic.read_register(LocalApic::kTimerCurrent) == 50);
    f.m.set_stop_addresses({});
    REQUIRE(f.run() == -1);
    CHECK(f.r15() == 1);
    REQUIRE(f.taken.size() == 1);
    CHECK(f.taken[0].first == 0x40);
    CHECK(f.taken[0].second == t0 + 50 * 2);
    CHECK(f.res32(0) == 0);  // one-shot: stays at 0
    CHECK(f.res32(4) == 0);
    CHECK(f.res32(8) == 1);      // ISR bit 40h while in the handler
    CHECK(f.res32(12) == 0x40);  // PPR = ISRV class
}

TEST_CASE("timer current count follows the divide configuration", "[apic][timer]") {
    // 10.5.4, Figure 10-10: divide value 011b = 16, 111b = 1. Reads placed as the
    // first instruction after a JMP see the exact time (see docs/semantics/apic.md).
    ApicFixture f(R"(
    mov dword [r12 + APIC_TDCR], 0x3        ; divide by 16
    mov dword [r12 + APIC_TICR], 1000
    mov ecx, 40
.spin:
    dec ecx
    jnz .spin                               ; 80 instructions = 5 ticks
    jmp .r1
.r1:
    mov eax, [r12 + APIC_TCCR]
    mov [RES + 0], eax
    mov dword [r12 + APIC_TDCR], 0xB        ; divide by 1 from here on
    nop
    nop
    jmp .r2
.r2:
    mov eax, [r12 + APIC_TCCR]
    mov [RES + 4], eax
    mov dword [r12 + APIC_TICR], 0          ; stops the timer
    mov eax, [r12 + APIC_TCCR]
    mov [RES + 8], eax
done:
    hlt
)");
    const bool per_insn = GENERATE(false, true);
    INFO("per-instruction loop: " << per_insn);
    if (per_insn) f.per_instruction_loop();
    REQUIRE(f.run() == -1);
    // The count starts at T0 = 4 (2 prelude + 2 instructions retired). The first read
    // runs with 86 retired: (86 - 4) / 16 = 5 ticks.
    CHECK(f.res32(0) == 995);
    // The DCR write is the 89th instruction: from then on (89 - 4) / 16 = 5 ticks are
    // kept and the count goes on at divide by 1; the second read runs with 92 retired.
    CHECK(f.res32(4) == 992);
    CHECK(f.res32(8) == 0);
    CHECK(f.taken.empty());  // the timer LVT stayed masked
}

TEST_CASE("periodic timer fires every N*divisor units until masked", "[apic][timer]") {
    ApicFixture f(R"(
    mov dword [r12 + APIC_SVR], 0x1FF
    mov dword [r12 + APIC_TDCR], 0xB        ; divide by 1
    mov dword [r12 + APIC_TIMER], 0x20041   ; periodic, vector 41h
    sti
    mov dword [r12 + APIC_TICR], 300
.wait:
    hlt
    cmp r15, 4
    jb .wait
    mov dword [r12 + APIC_TIMER], 0x30041   ; mask: no more interrupts
    mov ecx, 400
.spin:
    dec ecx
    jnz .spin                               ; 800 units: two more periods pass
    mov dword [r12 + APIC_TICR], 0
    cli
done:
    hlt
    LOGGED 0x41
)");
    const bool per_insn = GENERATE(false, true);
    INFO("per-instruction loop: " << per_insn);
    if (per_insn) f.per_instruction_loop();
    REQUIRE(f.run() == -1);
    CHECK(f.r15() == 4);
    REQUIRE(f.taken.size() == 4);
    const u64 t0 = 7;
    for (unsigned k = 0; k < 4; ++k) {
        CHECK(f.taken[k].first == 0x41);
        CHECK(f.taken[k].second == t0 + 300 * (k + 1));
        CHECK(f.log_vector(k) == 0x41);
    }
    CHECK(f.log_rip(0) == f.sym("start.wait") + 1);  // each one wakes the HLT
    CHECK(f.log_rip(3) == f.sym("start.wait") + 1);
    CHECK(f.apic.irr(0x41) == false);
}

TEST_CASE("a masked timer LVT raises nothing but the timer still counts", "[apic][timer]") {
    // 10.5.1 mask bit; 10.5.4: the count runs independently of the LVT mask.
    ApicFixture f(R"(
    mov dword [r12 + APIC_SVR], 0x1FF
    mov dword [r12 + APIC_TDCR], 0xB
    mov dword [r12 + APIC_TIMER], 0x10042   ; masked
    sti
    mov dword [r12 + APIC_TICR], 20
    mov ecx, 50
.spin:
    dec ecx
    jnz .spin
    mov eax, [r12 + APIC_TCCR]
    mov [RES + 0], eax
    mov eax, [r12 + APIC_IRR + 0x20]
    mov [RES + 4], eax
    cli
done:
    hlt
    LOGGED 0x42
)");
    REQUIRE(f.run() == -1);
    CHECK(f.r15() == 0);
    CHECK(f.taken.empty());
    CHECK(f.res32(0) == 0);
    CHECK(f.res32(4) == 0);
}

TEST_CASE("TPR holds lower-priority vectors in the IRR until it is lowered", "[apic][priority]") {
    // 10.8.3.1: only vectors whose class (bits 7:4) is above PPR[7:4] are delivered.
    ApicFixture f(R"(
    mov dword [r12 + APIC_SVR], 0x1FF
    mov dword [r12 + APIC_TPR], 0x5A
    sti
    mov dword [r12 + APIC_ICRLO], 0x00040045   ; self IPI, class 4: held
    mov eax, [r12 + APIC_IRR + 0x20]
    mov [RES + 0], eax
    mov eax, [r12 + APIC_PPR]
    mov [RES + 4], eax
    mov dword [r12 + APIC_ICRLO], 0x00040055   ; class 5 = TPR class: held
    mov eax, [r12 + APIC_IRR + 0x20]
    mov [RES + 8], eax
    mov eax, [r12 + APIC_APR]
    mov [RES + 12], eax
    mov dword [r12 + APIC_ICRLO], 0x00040065   ; class 6: taken after this instruction
after_65:
    mov dword [r12 + APIC_TPR], 0x40           ; 55h now above the TPR
after_tpr40:
    mov eax, [r12 + APIC_IRR + 0x20]
    mov [RES + 16], eax
    mov dword [r12 + APIC_TPR], 0
after_tpr0:
    mov eax, [r12 + APIC_PPR]
    mov [RES + 20], eax
    cli
done:
    hlt
    LOGGED 0x45
    LOGGED 0x55
    LOGGED 0x65
)");
    REQUIRE(f.run() == -1);
    CHECK(f.res32(0) == 0x00000020);   // IRR bit 45h
    CHECK(f.res32(4) == 0x5A);         // PPR = TPR (nothing in service)
    CHECK(f.res32(8) == 0x00200020);   // IRR bits 45h and 55h
    CHECK(f.res32(12) == 0x5A);        // APR = TPR: TPR class >= IRRV class, > ISRV class
    CHECK(f.res32(16) == 0x00000020);  // 45h still held at TPR 40h (class 4 is not above 4)
    CHECK(f.res32(20) == 0);
    REQUIRE(f.r15() == 3);
    CHECK(f.log_vector(0) == 0x65);
    CHECK(f.log_rip(0) == f.sym("after_65"));
    CHECK(f.log_vector(1) == 0x55);
    CHECK(f.log_rip(1) == f.sym("after_tpr40"));
    CHECK(f.log_vector(2) == 0x45);
    CHECK(f.log_rip(2) == f.sym("after_tpr0"));
}

TEST_CASE("TPR and CR8 are one register in 64-bit mode", "[apic][priority]") {
    // 10.8.6.1: CR8[3:0] = TPR[7:4]; a CR8 write clears TPR[3:0].
    ApicFixture f(R"(
    mov dword [r12 + APIC_TPR], 0x5A
    mov rax, cr8
    mov [RES + 0], rax
    mov eax, 3
    mov cr8, rax
    mov eax, [r12 + APIC_TPR]
    mov [RES + 8], eax
    mov eax, [r12 + APIC_PPR]
    mov [RES + 12], eax
    mov dword [r12 + APIC_SVR], 0x1FF
    mov eax, 6
    mov cr8, rax                               ; raising through CR8 blocks class 6
    sti
    mov dword [r12 + APIC_ICRLO], 0x00040066
    mov eax, [r12 + APIC_IRR + 0x30]
    mov [RES + 16], eax
    mov dword [r12 + APIC_ICRLO], 0x00040070   ; class 7 is taken
after_70:
    cli
done:
    hlt
    LOGGED 0x66
    LOGGED 0x70
)");
    REQUIRE(f.run() == -1);
    CHECK(f.phys(RES + 0) == 5);
    CHECK(f.res32(8) == 0x30);
    CHECK(f.res32(12) == 0x30);
    CHECK(f.res32(16) == 0x00000040);  // IRR bit 66h (word 3 = vectors 60h-7Fh)
    REQUIRE(f.r15() == 1);
    CHECK(f.log_vector(0) == 0x70);
    CHECK(f.log_rip(0) == f.sym("after_70"));
    CHECK(f.apic.irr(0x66));
}

TEST_CASE("nested vectors: ISR and IRR from the guest, EOI retires the highest",
          "[apic][priority]") {
    // 10.8.4 (IRR -> ISR on acknowledge, higher class nests), 10.8.5 (EOI clears the
    // highest ISR bit), 10.8.3.1 (PPR from ISRV).
    ApicFixture f(R"(
    mov dword [r12 + APIC_SVR], 0x1FF
    sti
    mov dword [r12 + APIC_ICRLO], 0x00040040
after_40:
    mov eax, [r12 + APIC_ISR + 0x20]
    mov [RES + 40], eax
    cli
done:
    hlt

vec_0x40:
    inc r15
    mov eax, [r12 + APIC_ISR + 0x20]
    mov [RES + 0], eax
    sti
    mov dword [r12 + APIC_ICRLO], 0x00040070   ; class 7 > 4: nests right here
in_40_after_70:
    mov eax, [r12 + APIC_ISR + 0x20]
    mov [RES + 4], eax
    mov eax, [r12 + APIC_ISR + 0x30]
    mov [RES + 8], eax
    mov dword [r12 + APIC_ICRLO], 0x00040041   ; same class as 40h: waits for its EOI
    mov eax, [r12 + APIC_IRR + 0x20]
    mov [RES + 12], eax
    mov eax, [r12 + APIC_PPR]
    mov [RES + 16], eax
    mov dword [r12 + APIC_EOI], 0              ; retires 40h: 41h is taken now
in_40_after_eoi:
    mov [RES + 48], r15
    iretq

vec_0x70:
    inc r15
    mov rax, [rsp]
    mov [RES + 56], rax
    mov eax, [r12 + APIC_ISR + 0x20]
    mov [RES + 20], eax
    mov eax, [r12 + APIC_ISR + 0x30]
    mov [RES + 24], eax
    mov eax, [r12 + APIC_PPR]
    mov [RES + 28], eax
    mov dword [r12 + APIC_EOI], 0              ; retires 70h, not 40h
    iretq

vec_0x41:
    inc r15
    mov rax, [rsp]
    mov [RES + 64], rax
    mov eax, [r12 + APIC_ISR + 0x20]
    mov [RES + 32], eax
    mov dword [r12 + APIC_EOI], 0
    mov eax, [r12 + APIC_ISR + 0x20]
    mov [RES + 36], eax
    iretq
)");
    REQUIRE(f.run() == -1);
    CHECK(f.r15() == 3);
    CHECK(f.res32(0) == 0x00000001);   // in 40h: ISR bit 40h
    CHECK(f.res32(20) == 0x00000001);  // in 70h: 40h still in service
    CHECK(f.res32(24) == 0x00010000);  //         and 70h
    CHECK(f.res32(28) == 0x70);        //         PPR = 70h
    CHECK(f.phys(RES + 56) == f.sym("in_40_after_70"));
    CHECK(f.res32(4) == 0x00000001);  // back in 40h: the EOI of 70h left 40h
    CHECK(f.res32(8) == 0);
    CHECK(f.res32(12) == 0x00000002);  // 41h held in the IRR
    CHECK(f.res32(16) == 0x40);
    CHECK(f.phys(RES + 64) == f.sym("in_40_after_eoi"));
    CHECK(f.res32(32) == 0x00000002);  // in 41h: only 41h in service
    CHECK(f.res32(36) == 0);
    CHECK(f.phys(RES + 48) == 3);
    CHECK(f.res32(40) == 0);
    std::vector<u8> order;
    for (auto& t : f.taken) order.push_back(t.first);
    CHECK(order == std::vector<u8>{0x40, 0x70, 0x41});
}

TEST_CASE("IPIs through the ICR: self, own APIC ID, logical, others, illegal vector",
          "[apic][ipi]") {
    // 10.6.1 (ICR; delivery status reads idle), Table 10-3 (shorthand/mode
    // combinations), 10.6.2 (physical and logical destinations), 10.5.3 (send illegal
    // vector: the IPI is not sent).
    ApicFixture f(R"(
    mov dword [r12 + APIC_SVR], 0x1FF
    sti
    mov dword [r12 + APIC_ICRLO], 0x00040050   ; shorthand self
s1:
    mov dword [r12 + APIC_ICRHI], 0x00000000   ; physical destination 0 = our ID
    mov dword [r12 + APIC_ICRLO], 0x00000051
s2:
    mov dword [r12 + APIC_ICRHI], 0x05000000   ; APIC ID 5: nobody
    mov dword [r12 + APIC_ICRLO], 0x00000052
    mov dword [r12 + APIC_ICRLO], 0x000C0053   ; all excluding self: nobody
    mov dword [r12 + APIC_LDR], 0x04000000     ; logical ID bit 2, flat model
    mov dword [r12 + APIC_ICRHI], 0x0C000000
    mov dword [r12 + APIC_ICRLO], 0x00000854   ; logical, 0Ch & 04h != 0
s3:
    mov dword [r12 + APIC_ICRHI], 0x03000000
    mov dword [r12 + APIC_ICRLO], 0x00000855   ; logical, 03h & 04h = 0: nobody
    mov dword [r12 + APIC_ICRLO], 0x00080056   ; all including self
s4:
    mov dword [r12 + APIC_ICRHI], 0xFF000000   ; physical broadcast
    mov dword [r12 + APIC_ICRLO], 0x00000057
s5:
    mov dword [r12 + APIC_ICRLO], 0x00040458   ; self + NMI: invalid combination, ignored
    mov eax, [r12 + APIC_ICRLO]
    mov [RES + 0], eax                         ; delivery status (bit 12) idle
    mov dword [r12 + APIC_ESR], 0
    mov eax, [r12 + APIC_ESR]
    mov [RES + 4], eax
    mov dword [r12 + APIC_ICRLO], 0x00040005   ; illegal vector
    mov dword [r12 + APIC_ESR], 0
    mov eax, [r12 + APIC_ESR]
    mov [RES + 8], eax
    mov dword [r12 + APIC_ICRHI], 0
    mov dword [r12 + APIC_ICRLO], 0x00000400   ; NMI to our own ID
s6:
    cli
done:
    hlt
    LOGGED 0x50
    LOGGED 0x51
    LOGGED 0x52
    LOGGED 0x53
    LOGGED 0x54
    LOGGED 0x55
    LOGGED 0x56
    LOGGED 0x57
    LOGGED 0x58
vec_0x02:
    push rax
    mov rax, [rsp + 8]
    mov [RES + 16], rax
    pop rax
    inc r15
    iretq
)");
    REQUIRE(f.run() == -1);
    REQUIRE(f.r15() == 6);
    const std::pair<u64, const char*> want[] = {
        {0x50, "s1"}, {0x51, "s2"}, {0x54, "s3"}, {0x56, "s4"}, {0x57, "s5"}};
    for (unsigned k = 0; k < 5; ++k) {
        CHECK(f.log_vector(k) == want[k].first);
        CHECK(f.log_rip(k) == f.sym(want[k].second));
    }
    CHECK(f.res32(0) == 0x00040458);
    CHECK(f.res32(4) == 0);
    CHECK(f.res32(8) == LocalApic::kEsrSendIllegalVector);
    CHECK(f.phys(RES + 16) == f.sym("s6"));
    CHECK(f.taken.back().first == 2);
}

TEST_CASE("illegal register access: ESR bit 7 and the LVT error interrupt", "[apic][error]") {
    // 10.5.3: errors are latched in the ESR by the next ESR write, which also rearms
    // the error interrupt; the first error signals the LVT error entry.
    ApicFixture f(R"(
    mov dword [r12 + APIC_SVR], 0x1FF
    mov dword [r12 + APIC_ERROR], 0x4E
    sti
    mov eax, [r12 + 0x40]                      ; unimplemented register
after_bad_read:
    mov dword [r12 + 0x3F0], 1                 ; a second error: no interrupt until rearmed
    mov eax, [r12 + APIC_ESR]
    mov [RES + 0], eax                         ; not latched yet
    mov dword [r12 + APIC_ESR], 0
    mov eax, [r12 + APIC_ESR]
    mov [RES + 4], eax
    mov dword [r12 + APIC_ESR], 0
    mov eax, [r12 + APIC_ESR]
    mov [RES + 8], eax
    cli
done:
    hlt
    LOGGED 0x4E
)");
    REQUIRE(f.run() == -1);
    REQUIRE(f.r15() == 1);
    CHECK(f.log_vector(0) == 0x4E);
    CHECK(f.log_rip(0) == f.sym("after_bad_read"));
    CHECK(f.res32(0) == 0);
    CHECK(f.res32(4) == LocalApic::kEsrIllegalRegister);
    CHECK(f.res32(8) == 0);
}

TEST_CASE("relocating IA32_APIC_BASE moves the register page, disabling it resets the APIC",
          "[apic][msr]") {
    // 10.4.4 (IA32_APIC_BASE), 10.4.5 (relocation), 10.4.3 (global disable: the range
    // is not decoded and the APIC returns to its power-up state).
    ApicFixture f(R"(
    mov dword [r12 + APIC_SVR], 0x1FF
    mov dword [r12 + APIC_TIMER], 0x20044
    mov ecx, 0x1B
    mov eax, 0x00A00900                        ; base 00A00000h, inside RAM
    xor edx, edx
    wrmsr
    mov r13, 0xA00000
    mov eax, [r13 + APIC_VER]
    mov [RES + 0], eax
    mov eax, [r13 + APIC_SVR]                  ; state kept across the move
    mov [RES + 4], eax
    mov eax, [r12 + APIC_VER]                  ; old page: nothing decodes it (above RAM)
    mov [RES + 8], eax
    mov ecx, 0x1B
    rdmsr
    mov [RES + 12], eax
    sti
    mov dword [r13 + APIC_ICRLO], 0x00040060   ; self IPI through the new page
after_ipi:
    mov eax, 0x00A00100                        ; EN = 0 (write BSP = 1 too)
    mov ecx, 0x1B
    wrmsr
    mov eax, [r13 + APIC_VER]                  ; now RAM
    mov [RES + 16], eax
    mov dword [r13 + APIC_ICRLO], 0x00040061   ; a RAM write: no IPI
    mov eax, 0x00A00800                        ; EN = 1, BSP = 0 written: ignored
    wrmsr
    rdmsr
    mov [RES + 20], eax
    mov eax, [r13 + APIC_SVR]                  ; power-up state again
    mov [RES + 24], eax
    mov eax, [r13 + APIC_TIMER]
    mov [RES + 28], eax
    mov eax, [r13 + APIC_ICRLO]
    mov [RES + 32], eax
    mov eax, 0xFEE00900
    wrmsr
    mov eax, [r12 + APIC_VER]                  ; back at the default address
    mov [RES + 36], eax
    mov eax, [r13 + APIC_VER]                  ; and RAM again at the old one
    mov [RES + 40], eax
    cli
done:
    hlt
    LOGGED 0x60
    LOGGED 0x61
)");
    f.put(0xA00030, 0x12345678, 4);
    REQUIRE(f.run() == -1);
    CHECK(f.res32(0) == 0x00060014);
    CHECK(f.res32(4) == 0x1FF);
    CHECK(f.res32(8) == 0xFFFFFFFF);
    CHECK(f.res32(12) == 0x00A00900);
    REQUIRE(f.r15() == 1);
    CHECK(f.log_vector(0) == 0x60);
    CHECK(f.log_rip(0) == f.sym("after_ipi"));
    CHECK(f.res32(16) == 0x12345678);
    CHECK(f.res32(20) == 0x00A00900);
    CHECK(f.res32(24) == 0xFF);
    CHECK(f.res32(28) == 0x00010000);
    CHECK(f.res32(32) == 0);
    CHECK(f.res32(36) == 0x00060014);
    CHECK(f.res32(40) == 0x12345678);
    CHECK(f.phys(0xA00300, 4) == 0x00040061);  // the store went to RAM
    CHECK(f.apic.apic_base_msr() == 0xFEE00900);
}

TEST_CASE("IA32_APIC_BASE reserved bits raise #GP(0)", "[apic][msr]") {
    // Bits 7:0, 9, 10 (EXTD: no x2APIC) and MAXPHYADDR (36) and above are reserved.
    for (u64 value : {0xFEE00901ull, 0xFEE00B00ull, 0xFEE00D00ull, 0x10FEE00900ull}) {
        INFO(std::hex << value);
        ApicFixture f("    mov ecx, 0x1B\n    mov eax, " + std::to_string(u32(value)) +
                      "\n    mov edx, " + std::to_string(u32(value >> 32)) +
                      "\n    wrmsr\ndone:\n    hlt\n");
        CHECK(f.run() == vec::GP);
        CHECK(f.frame(0) == 0);  // error code 0
        CHECK(f.apic.apic_base_msr() == 0xFEE00900);
    }
}

namespace {
/// A guest spinning with interrupts enabled and the perfmon LVT at vector 50h. The
/// handler records the LVT it sees and, if R14 = 1, clears the mask before EOI
/// (the PMI handler protocol of the seed documents: clear the mask, write EOI).
const char* kPerfmonGuest = R"(
    mov dword [r12 + APIC_SVR], 0x1FF
    mov dword [r12 + APIC_PERF], 0x50
    sti
spin:
    nop
    jmp spin
vec_0x50:
    push rax
    push rdi
    mov rdi, r15
    shl rdi, 4
    mov eax, [r12 + APIC_PERF]
    mov [LOG + rdi], rax
    inc r15
    test r14, r14
    jz .keep
    mov dword [r12 + APIC_PERF], 0x50          ; clear the mask
.keep:
    mov dword [r12 + APIC_EOI], 0
    pop rdi
    pop rax
    iretq
vec_0x02:
    push rax
    push rdi
    mov rdi, r15
    shl rdi, 4
    mov eax, [r12 + APIC_PERF]
    mov [LOG + rdi], rax
    inc r15
    mov dword [r12 + APIC_PERF], 0x400         ; NMI mode, unmasked; no EOI for NMI
    pop rdi
    pop rax
    iretq
done:
    hlt
)";
}  // namespace

TEST_CASE("perfmon LVT: delivered once, masked on delivery, masked requests dropped",
          "[apic][pmi]") {
    // 10.5.1, Mask: "inhibits reception of the interrupt"; "When the local APIC handles
    // a performance-monitoring counters interrupt, it automatically sets the mask flag
    // in the corresponding LVT entry. This flag will remain set until software clears
    // it." A request that finds the entry masked is therefore not received: it is not
    // latched and is not delivered when software later clears the mask.
    ApicFixture f(kPerfmonGuest);
    f.m.cpu().gpr[R14] = 1;
    f.m.run(RunLimits{50});
    REQUIRE(f.apic.lvt(LocalApic::Lvt::kPerfmon) == 0x50);
    REQUIRE(f.r15() == 0);

    // First request: received, IRR bit set, the mask set at once.
    CHECK(f.apic.raise_perfmon());
    CHECK(f.apic.irr(0x50));
    CHECK(f.apic.lvt(LocalApic::Lvt::kPerfmon) == 0x00010050);
    // Second request before the first is even taken: the entry is masked, dropped.
    CHECK_FALSE(f.apic.raise_perfmon());
    CHECK(f.m.run(RunLimits{200}).reason == StopReason::kInstructionLimit);
    CHECK(f.r15() == 1);                                  // delivered once
    CHECK(f.log_vector(0) == 0x00010050);                 // the handler saw the mask set
    CHECK(f.apic.lvt(LocalApic::Lvt::kPerfmon) == 0x50);  // and cleared it
    CHECK_FALSE(f.apic.isr(0x50));
    CHECK_FALSE(f.apic.irr(0x50));
    f.m.run(RunLimits{200});
    CHECK(f.r15() == 1);  // the dropped request never comes

    // A handler that does not clear the mask: later requests are dropped until it is.
    f.m.cpu().gpr[R14] = 0;
    CHECK(f.apic.raise_perfmon());
    f.m.run(RunLimits{200});
    CHECK(f.r15() == 2);
    CHECK(f.apic.lvt(LocalApic::Lvt::kPerfmon) == 0x00010050);
    CHECK_FALSE(f.apic.raise_perfmon());
    f.m.run(RunLimits{200});
    CHECK(f.r15() == 2);
    CHECK_FALSE(f.apic.isr(0x50));  // the handler's EOI retired it

    // Software clears the mask (here from the host through the bus, as a store would).
    f.m.memory_bus().write(0xFEE00340, 4, 0x50);
    f.m.cpu().gpr[R14] = 1;
    CHECK(f.apic.raise_perfmon());
    f.m.run(RunLimits{200});
    CHECK(f.r15() == 3);
    std::vector<u8> vectors;
    for (auto& t : f.taken) vectors.push_back(t.first);
    CHECK(vectors == std::vector<u8>{0x50, 0x50, 0x50});
}

TEST_CASE("perfmon LVT in NMI delivery mode raises NMI and masks the entry", "[apic][pmi]") {
    // 10.5.1: delivery mode 100b delivers an NMI (vector ignored, no IRR/ISR, no EOI);
    // the perfmon mask is set as for Fixed mode.
    ApicFixture f(kPerfmonGuest);
    f.m.run(RunLimits{50});
    f.m.memory_bus().write(0xFEE00340, 4, 0x400);
    CHECK(f.apic.raise_lvt(LocalApic::Lvt::kPerfmon));
    CHECK(f.apic.lvt(LocalApic::Lvt::kPerfmon) == 0x00010400);
    CHECK_FALSE(f.apic.raise_perfmon());  // masked: dropped
    f.m.run(RunLimits{200});
    REQUIRE(f.r15() == 1);
    CHECK(f.log_vector(0) == 0x00010400);
    CHECK(f.apic.lvt(LocalApic::Lvt::kPerfmon) == 0x400);  // the NMI handler unmasked it
    REQUIRE(f.taken.size() == 1);
    CHECK(f.taken[0].first == vec::NMI);
    for (unsigned w = 0; w < 8; ++w) {
        CHECK(f.apic.read_register(LocalApic::kIsr + 16 * w) == 0);
        CHECK(f.apic.read_register(LocalApic::kIrr + 16 * w) == 0);
    }
    CHECK(f.apic.raise_perfmon());
    f.m.run(RunLimits{200});
    CHECK(f.r15() == 2);
}

TEST_CASE(
    "LVT requests: software-disabled or globally disabled APIC, illegal vector, unmodelled modes",
    "[apic][pmi]") {
    ApicFixture f("done:\n    hlt\n");
    // After reset the APIC is software-disabled and every LVT is masked.
    CHECK_FALSE(f.apic.raise_perfmon());
    f.m.memory_bus().write(0xFEE000F0, 4, 0x1FF);
    // Fixed mode with a vector below 16: not delivered, "receive illegal vector" (10.5.2).
    f.m.memory_bus().write(0xFEE00340, 4, 0x0F);
    CHECK_FALSE(f.apic.raise_perfmon());
    f.m.memory_bus().write(0xFEE00280, 4, 0);
    CHECK(f.apic.read_register(LocalApic::kEsr) == LocalApic::kEsrReceiveIllegalVector);
    CHECK(f.apic.lvt(LocalApic::Lvt::kPerfmon) == 0x0F);
    // SMI delivery mode is not modelled: dropped and counted.
    f.m.memory_bus().write(0xFEE00330, 4, 0x200);
    CHECK_FALSE(f.apic.raise_lvt(LocalApic::Lvt::kThermal));
    CHECK(f.apic.unmodelled_requests() == 1);
    // Thermal and CMCI entries in Fixed mode are not masked by delivery (only perfmon is).
    f.m.memory_bus().write(0xFEE00330, 4, 0x61);
    CHECK(f.apic.raise_lvt(LocalApic::Lvt::kThermal));
    CHECK(f.apic.lvt(LocalApic::Lvt::kThermal) == 0x61);
    CHECK(f.apic.irr(0x61));
    CHECK(f.apic.pending() == std::optional<u8>(0x61));
    // Global disable (IA32_APIC_BASE[11] = 0): nothing is received or pending.
    f.m.cpu().msrs.write(0x1B, 0xFEE00100);
    CHECK_FALSE(f.apic.irr(0x61));
    CHECK(f.apic.pending() == std::nullopt);
    CHECK_FALSE(f.apic.raise_perfmon());
    CHECK(f.m.memory_bus().read(0xFEE00030, 4) == 0xFFFFFFFF);
}
