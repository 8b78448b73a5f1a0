// Exceptions and interrupts (SDM Vol. 3, ch. 6; Vol. 2 instruction pages): each
// exception class with its error code and frame, segment-load faults, #TS, double
// and triple faults, real-mode delivery through the IVT, CPUID, MSR and control/debug
// register faults. Programs are NASM at 0x1000 on a preset; vectors 0-31 lead to a
// recording handler (vector at RES+0x100, stack pointer at RES+0x108).
#include <catch2/catch.hpp>

#include "sim/cpu_profile.h"
#include "sim/machine.h"
#include "sim/nasm.h"
#include "sim/presets.h"
#include "tests/support/system_fixture.h"

using namespace pmusim;
namespace L = preset_layout;

namespace {

constexpr u64 RES = test::kRes;

/// The shared fixture with this file's handler options.
struct Sys : test::SystemFixture {
    Sys(StartPreset preset, const std::string& body) : SystemFixture(preset, body, Options{}) {}
};

/// Flat data segment descriptor (SDM Vol. 3, 3.4.5): `access` byte, G=1, D/B=1.
constexpr u64 data_desc(u8 access) {
    return 0xFFFFull | (u64(access) << 40) | (0xFull << 48) | (0xCull << 52);
}

struct Fault {
    const char* name;
    StartPreset preset;
    const char* code;  ///< the instruction expected to fault is at `probe`; success reaches `done`
    int vector;
    int err;            ///< error code, or -1 if the exception pushes none
    bool trap = false;  ///< the pushed RIP is that of the next instruction
};

constexpr auto k64 = StartPreset::kLong64;
constexpr auto k32 = StartPreset::kProtected32;

}  // namespace

TEST_CASE("exception classes: vector and error code and frame", "[system][exceptions]") {
    // Faults push the RIP of the faulting instruction, traps (INT3, INTO) that of the
    // next one (SDM Vol. 3, 6.5, 6.15); the error code comes first where Table 6-1 has
    // one; same-privilege delivery pushes (E)FLAGS, CS, (E)IP and, in 64-bit mode, SS:RSP
    // (6.12.1, 6.14.2). Every program starts at CPL 0 with RSP 80000h.
    const Fault faults[] = {
        {"#DE: DIV by zero", k64, "xor edx, edx\n xor ecx, ecx\n mov eax, 1\nprobe: div ecx",
         vec::DE, -1},
        {"#DE: IDIV overflow (32-bit)", k32,
         "mov eax, 0x80000000\n cdq\n mov ecx, -1\nprobe: idiv ecx", vec::DE, -1},
        {"#UD: UD2", k64, "probe: ud2", vec::UD, -1},
        {"#UD: INTO in 64-bit mode", k64, "probe: db 0xCE", vec::UD, -1},
        {"#UD: LOCK on a register operand", k64, "probe: db 0xF0, 0x01, 0xC0", vec::UD, -1},
        {"#BP: INT3", k64, "probe: int3", vec::BP, -1, true},
        {"#BP: INT3 (32-bit)", k32, "probe: int3", vec::BP, -1, true},
        {"#OF: INTO with OF=1 (32-bit); INTO with OF=0 does nothing", k32,
         "xor eax, eax\n into\n mov al, 0x7F\n add al, 1\nprobe: into", vec::OF, -1, true},
        {"#GP(0): non-canonical data address", k64,
         "mov rax, 0x0000800000000000\nprobe: mov rbx, [rax]", vec::GP, 0},
        {"#GP(0): non-canonical jump target (reported on the JMP)", k64,
         "mov rax, 0xFFFF000000000000\nprobe: jmp rax", vec::GP, 0},
        {"#SS(0): non-canonical address through SS (RBP base)", k64,
         "mov rbp, 0x0000800000000000\nprobe: mov rbx, [rbp]", vec::SS, 0},
        {"#GP(sel): DS selector beyond the GDT limit", k64, "mov ax, 0x5B\nprobe: mov ds, ax",
         vec::GP, 0x58},
        {"#GP(sel): DS selector beyond the GDT limit (32-bit)", k32,
         "mov ax, 0x5B\nprobe: mov ds, ax", vec::GP, 0x58},
        {"#GP(sel): DS loaded with a TSS descriptor", k32, "mov ax, 0x40\nprobe: mov ds, ax",
         vec::GP, 0x40},
        {"#GP(sel): DS loaded with a DPL-0 segment through RPL 3", k32,
         "mov ax, 0x1B\nprobe: mov ds, ax", vec::GP, 0x18},
        {"#NP(sel): DS loaded with a not-present data segment", k32,
         "mov ax, 0x50\nprobe: mov ds, ax", vec::NP, 0x50},
        {"#NP(sel): not-present data segment (64-bit)", k64, "mov ax, 0x50\nprobe: mov ds, ax",
         vec::NP, 0x50},
        {"null selector in DS is allowed, using it is #GP(0)", k32,
         "xor eax, eax\n mov ds, ax\nprobe: mov eax, [0x20000]", vec::GP, 0},
        // MOV SS (SDM Vol. 2, MOV): RPL != CPL, DPL != CPL or not writable -> #GP(sel);
        // not present -> #SS(sel); null -> #GP(0).
        {"MOV SS: DPL 3 data segment at CPL 0", k32, "mov ax, 0x28\nprobe: mov ss, ax", vec::GP,
         0x28},
        {"MOV SS: RPL 3 != CPL 0", k32, "mov ax, 0x1B\nprobe: mov ss, ax", vec::GP, 0x18},
        {"MOV SS: code segment", k32, "mov ax, 0x08\nprobe: mov ss, ax", vec::GP, 0x08},
        {"MOV SS: read-only data segment", k32, "mov ax, 0x58\nprobe: mov ss, ax", vec::GP, 0x58},
        {"MOV SS: null selector", k32, "xor eax, eax\nprobe: mov ss, ax", vec::GP, 0},
        {"MOV SS: not-present segment -> #SS", k32, "mov ax, 0x50\nprobe: mov ss, ax", vec::SS,
         0x50},
        // System-segment loads and far transfers (SDM Vol. 2, LTR, LLDT, JMP, CALL).
        {"LTR of a busy TSS", k64, "mov ax, 0x40\nprobe: ltr ax", vec::GP, 0x40},
        {"LTR of a busy TSS (32-bit)", k32, "mov ax, 0x40\nprobe: ltr ax", vec::GP, 0x40},
        {"LLDT with a data segment", k32, "mov ax, 0x18\nprobe: lldt ax", vec::GP, 0x18},
        {"far JMP to a data segment", k32, "probe: jmp 0x18:0", vec::GP, 0x18},
        {"far JMP to a DPL-3 non-conforming code segment from CPL 0", k32, "probe: jmp 0x23:0",
         vec::GP, 0x20},
        {"far CALL to a not-present code segment", k32, "probe: call 0x60:0", vec::NP, 0x60},
        // MSRs and control registers.
        {"RDMSR of an unimplemented MSR", k64, "mov ecx, 0x12345678\nprobe: rdmsr", vec::GP, 0},
        {"WRMSR IA32_EFER with reserved bit 1", k64,
         "mov ecx, 0xC0000080\n rdmsr\n or eax, 2\nprobe: wrmsr", vec::GP, 0},
        {"WRMSR IA32_EFER with reserved bit 63", k64,
         "mov ecx, 0xC0000080\n rdmsr\n or edx, 0x80000000\nprobe: wrmsr", vec::GP, 0},
        {"MOV CR0 with PG=1 and PE=0", k32,
         "mov eax, cr0\n and eax, ~1\n or eax, 0x80000000\nprobe: mov cr0, eax", vec::GP, 0},
        {"MOV CR0 with NW=1 and CD=0", k32,
         "mov eax, cr0\n and eax, ~0x40000000\n or eax, 0x20000000\nprobe: mov cr0, eax", vec::GP,
         0},
        {"MOV CR4 with reserved bit 31", k32,
         "mov eax, cr4\n or eax, 0x80000000\nprobe: mov cr4, eax", vec::GP, 0},
        // CR4 bits of features CPUID does not report are reserved (SDM Vol. 3, 2.5; Vol. 2,
        // MOV CR: #GP(0) for a 1 in a reserved CR4 bit). The generic profile has no leaf 7
        // (CPUID.07H:EBX.SMEP[7] = FSGSBASE[0] = 0).
        {"MOV CR4 setting SMEP without CPUID support", k32,
         "mov eax, cr4\n or eax, 1 << 20\nprobe: mov cr4, eax", vec::GP, 0},
        {"MOV CR4 setting FSGSBASE without CPUID support", k64,
         "mov rax, cr4\n or eax, 1 << 16\nprobe: mov cr4, rax", vec::GP, 0},
        {"MOV CR3 with bit 40 set (above MAXPHYADDR)", k64,
         "mov rax, cr3\n bts rax, 40\nprobe: mov cr3, rax", vec::GP, 0},
        {"MOV CR4 clearing PAE in IA-32e mode", k64,
         "mov rax, cr4\n and eax, ~0x20\nprobe: mov cr4, rax", vec::GP, 0},
        // Fast system calls at CPL 0 (SDM Vol. 2, SYSCALL, SYSENTER, SYSRET).
        {"SYSCALL with IA32_EFER.SCE=0", k64,
         "mov ecx, 0xC0000080\n rdmsr\n and eax, ~1\n wrmsr\nprobe: syscall", vec::UD, -1},
        {"SYSENTER with IA32_SYSENTER_CS=0", k64,
         "mov ecx, 0x174\n xor eax, eax\n xor edx, edx\n wrmsr\nprobe: sysenter", vec::GP, 0},
        {"SYSRET to a non-canonical RCX (#GP at CPL 0)", k64,
         "mov rcx, 0x0000800000000000\nprobe: o64 sysret", vec::GP, 0},
        {"MOV to DR4 with CR4.DE=1", k32,
         "mov eax, cr4\n or eax, 8\n mov cr4, eax\nprobe: mov dr4, eax", vec::UD, -1},
    };
    for (const Fault& f : faults) {
        DYNAMIC_SECTION(f.name) {
            Sys s(f.preset, std::string("start:\n ") + f.code + "\ndone:\n hlt\n");
            s.gdt(10, data_desc(0x13));  // 50h: DPL 0 writable data, not present
            s.gdt(11, data_desc(0x91));  // 58h: DPL 0 read-only data, present
            s.gdt(12, data_desc(0x1B));  // 60h: DPL 0 code, not present
            const int vector = s.run();
            REQUIRE(vector == f.vector);
            const bool is64 = f.preset == k64;
            unsigned k = 0;
            if (f.err >= 0) CHECK(s.frame(k++) == u64(f.err));
            const u64 probe = s.sym("probe");
            CHECK(s.frame(k++) == (f.trap ? s.sym("done") : probe));
            CHECK(s.frame(k++) == (is64 ? 0x10u : 0x08u));
            k++;  // RFLAGS
            if (is64) {
                CHECK(s.frame(k++) == 0x80000);
                CHECK(s.frame(k++) == 0x18);
            }
            CHECK(s.phys(RES + 0x108) == 0x80000 - k * s.width);
            REQUIRE(s.events.size() == 1);
            CHECK(s.events[0].vector == f.vector);
            CHECK(s.events[0].has_error_code == (f.err >= 0));
        }
    }
}

TEST_CASE("64-bit: stack alignment and IST and IRETQ restoring an unaligned RSP",
          "[system][exceptions]") {
    // SDM Vol. 3, 6.14.2: RSP is aligned down to 16 before the frame is pushed, and the
    // old RSP is pushed as it was; 6.14.5: a gate with IST n always switches to ISTn;
    // IRETQ pops SS:RSP also at the same privilege level (6.14.3).
    Sys s(k64, R"(
start:
    mov rsp, 0x7FFF8
    int3
    mov [RES + 0x00], rsp
    int 0x81
    mov [RES + 0x08], rsp
done:
    hlt
bp_handler:
    mov [RES + 0x10], rsp
    mov rax, [rsp + 24]
    mov [RES + 0x20], rax
    iretq
ist_handler:
    mov [RES + 0x18], rsp
    mov rax, [rsp + 24]
    mov [RES + 0x28], rax
    iretq
)");
    set_idt_gate(s.m, vec::BP, s.sym("bp_handler"));
    set_idt_gate(s.m, 0x81, s.sym("ist_handler"), 0, false, 1);
    REQUIRE(s.run() == -1);
    CHECK(s.q(0x10) == 0x7FFF0 - 5 * 8);
    CHECK(s.q(0x20) == 0x7FFF8);
    CHECK(s.q(0x00) == 0x7FFF8);
    CHECK(s.q(0x18) == L::kIst1 - 5 * 8);
    CHECK(s.q(0x28) == 0x7FFF8);
    CHECK(s.q(0x08) == 0x7FFF8);
}

TEST_CASE("32-bit: a 16-bit interrupt gate pushes a 16-bit frame", "[system][exceptions]") {
    // SDM Vol. 3, 6.11 (gate size D=0), 6.12.1, Figure 6-4: FLAGS, CS, IP as words.
    Sys s(k32, R"(
start:
    xor eax, eax
probe:
    int3
done:
    hlt
h16:
    mov [RES + 0x108], esp
    mov dword [RES + 0x100], 3
    hlt
)");
    const u64 h = s.sym("h16");
    s.put(L::kIdt + vec::BP * 8, (h & 0xFFFF) | (0x08ull << 16) | (0x86ull << 40));
    const RunResult r = s.run_raw();
    REQUIRE(r.reason == StopReason::kHalt);
    REQUIRE(s.phys(RES + 0x100, 4) == vec::BP);
    const u64 sp = s.phys(RES + 0x108, 4);
    CHECK(sp == 0x80000 - 6);
    CHECK(s.phys(sp, 2) == s.sym("done"));
    CHECK(s.phys(sp + 2, 2) == 0x08);
    CHECK(s.phys(sp + 4, 2) == 0x46);
}

TEST_CASE("MOV to DR4 with CR4.DE=0 aliases DR6", "[system][exceptions]") {
    // SDM Vol. 3, 17.2.2: with DE clear DR4/DR5 are aliases of DR6/DR7.
    Sys s(k32, R"(
start:
    mov eax, 0xFFFF0FF1
    mov dr4, eax
    mov eax, dr6
    mov [RES], eax
    xor eax, eax
    mov eax, dr4
    mov [RES + 4], eax
done:
    hlt
)");
    REQUIRE(s.run() == -1);
    CHECK(s.phys(RES, 4) == 0xFFFF0FF1);
    CHECK(s.phys(RES + 4, 4) == 0xFFFF0FF1);
    CHECK(s.m.cpu().dr[6] == 0xFFFF0FF1);
}

TEST_CASE("CPUID answers from the profile", "[system][exceptions]") {
    // SDM Vol. 2, CPUID: leaf 0 gives the maximum basic leaf and the vendor string in
    // EBX, EDX, ECX; leaf 1 EDX bit 21 is DS (debug store).
    Sys s(k64, R"(
start:
    xor eax, eax
    cpuid
    mov [RES + 0x00], eax
    mov [RES + 0x04], ebx
    mov [RES + 0x08], edx
    mov [RES + 0x0C], ecx
    mov eax, 1
    cpuid
    mov [RES + 0x10], edx
done:
    hlt
)");
    REQUIRE(s.run() == -1);
    char vendor[13] = {};
    s.m.peek(RES + 4, vendor, 12);
    CHECK(std::string(vendor) == "GenuineIntel");
    CHECK(s.phys(RES, 4) == generic_intel_profile().query(0, 0).eax);
    CHECK((s.phys(RES + 0x10, 4) >> 21 & 1) == 1);
}

TEST_CASE("#TS: null SS0 in the TSS during an interrupt from ring 3", "[system][exceptions]") {
    // INT n from CPL 3 to a DPL-0 handler reads SS0:ESP0 from the TSS; a null SS0 raises
    // #TS(EXT) with EXT = 0 for INT n (SDM Vol. 2, INT n, INTER-PRIVILEGE-LEVEL-INTERRUPT;
    // Vol. 3, 6.15 Interrupt 10). The #TS handler is in a conforming segment, so it runs at
    // CPL 3 on the user stack without a stack switch (SDM Vol. 3, 6.12.1). It restores SS0
    // and retries with INT 80h.
    Sys s(k32, R"(
start:
    push 0x2B
    push 0x70000
    push 0x202
    push 0x23
    push user
    iretd
user:
    mov ax, 0x2B
    mov ds, ax
probe:
    int 0x81
ts_handler:
    mov [RES + 0x108], esp
    mov dword [RES + 0x100], 10
    mov [RES + 0x10], cs
    mov word [0x102008], 0x18
    int 0x80
done:
    hlt
)");
    s.put(L::kTss + 8, 0, 2);  // SS0 = 0
    s.gdt(10, 0xFFFFull | (0x9Full << 40) | (0xFull << 48) |
                  (0xCull << 52));  // 50h: conforming code, DPL 0
    const u64 h = s.sym("ts_handler");
    s.put(L::kIdt + vec::TS * 8,
          (h & 0xFFFF) | (0x50ull << 16) | (0x8Eull << 40) | ((h >> 16) << 48));
    set_idt_gate(s.m, 0x81, s.sym("done"), 3);
    set_idt_gate(s.m, 0x80, s.sym("done"), 3);
    REQUIRE(s.run() == -1);
    REQUIRE(s.phys(RES + 0x100, 4) == vec::TS);
    CHECK(s.frame(0) == 0);               // error code: null SS, EXT = 0
    CHECK(s.frame(1) == s.sym("probe"));  // a fault: EIP of the INT
    CHECK(s.frame(2) == 0x23);
    CHECK(s.frame(3) == 0x202);
    CHECK(s.phys(RES + 0x108) == 0x70000 - 16);
    CHECK((s.q(0x10) & 0xFFFF) == 0x53);  // conforming: CPL unchanged, CS.RPL = 3
}

TEST_CASE("#SS: the SS0 segment has no room for the frame during a ring 3 -> 0 interrupt",
          "[system][exceptions]") {
    // SDM Vol. 2, INT n, INTER-PRIVILEGE-LEVEL-INTERRUPT: if the new stack segment
    // (SS0 = 50h, limit FFFh, byte granular) has no room for the 20-byte frame at ESP0 =
    // 2000h: #SS(error_code(NewSS, 0, EXT)) with EXT = 0 for INT n (Vol. 3, 6.13). The #SS
    // handler is in a conforming segment (58h), so it runs at CPL 3 on the user stack.
    Sys s(k32, R"(
start:
    push 0x2B
    push 0x70000
    push 0x202
    push 0x23
    push user
    iretd
user:
    mov ax, 0x2B
    mov ds, ax
probe:
    int 0x81
ss_handler:
    mov [RES + 0x108], esp
    mov dword [RES + 0x100], 12
    mov word [0x102008], 0x18
    mov dword [0x102004], 0x10F000
    int 0x80
done:
    hlt
)");
    s.gdt(10, 0x0FFFull | (0x93ull << 40) | (0x4ull << 52));  // 50h: data, limit FFFh
    s.gdt(11,
          0xFFFFull | (0x9Full << 40) | (0xFull << 48) | (0xCull << 52));  // 58h: conforming code
    s.put(L::kTss + 4, 0x2000, 4);
    s.put(L::kTss + 8, 0x50, 2);
    const u64 h = s.sym("ss_handler");
    s.put(L::kIdt + vec::SS * 8,
          (h & 0xFFFF) | (0x58ull << 16) | (0x8Eull << 40) | ((h >> 16) << 48));
    set_idt_gate(s.m, 0x81, s.sym("done"), 3);
    set_idt_gate(s.m, 0x80, s.sym("done"), 3);
    REQUIRE(s.run() == -1);
    REQUIRE(s.phys(RES + 0x100, 4) == vec::SS);
    CHECK(s.frame(0) == 0x50);
    CHECK(s.frame(1) == s.sym("probe"));
    CHECK(s.frame(2) == 0x23);
    CHECK(s.phys(RES + 0x108) == 0x70000 - 16);
    CHECK(s.phys(0x2000 - 20, 8) == 0);  // nothing was written beyond the SS0 limit
}

TEST_CASE("IDT checks: vector beyond the IDT limit and an entry that is not a gate",
          "[system][exceptions]") {
    // SDM Vol. 2, INT n: an IDT entry beyond IDTR.limit, or one that is not an
    // interrupt or trap gate (in IA-32e mode only 64-bit interrupt/trap gates are
    // valid; Vol. 3, 6.14.1), raises #GP(vector * 8 + 2 + EXT), EXT = 0 for INT n.
    Sys s(k64, R"(
start:
    sidt [RES + 0x300]
    mov word [RES + 0x300], 0x80 * 16 - 1
    cmp ebx, 1
    jne no_lidt
    lidt [RES + 0x300]
no_lidt:
probe:
    int 0x80
done:
    hlt
)");
    const bool limit = GENERATE(true, false);
    s.m.cpu().gpr[RBX] = limit;
    if (!limit) {  // gate 80h becomes a 64-bit call gate (type 0Ch)
        const u64 a = L::kIdt + 0x80 * 16 + 5;
        s.put(a, (s.phys(a, 1) & 0xF0) | 0xC, 1);
    }
    INFO((limit ? "beyond the limit" : "call gate in the IDT"));
    REQUIRE(s.run() == vec::GP);
    CHECK(s.frame(0) == 0x80 * 8 + 2);
    CHECK(s.frame(1) == s.sym("probe"));
}

TEST_CASE("double fault: contributory and page-fault combinations (Table 6-5)",
          "[system][exceptions]") {
    // A #GP whose gate is not present raises #NP(13*8+2+EXT) while being delivered; two
    // contributory exceptions make #DF with error code 0 (SDM Vol. 3, 6.15 Interrupt 8,
    // Tables 6-4 and 6-5). The same for a #PF followed by a contributory exception.
    struct Case {
        const char* name;
        const char* code;
        u8 first;
    };
    const Case cases[] = {
        {"#GP then #NP", "mov rax, 0x0000800000000000\n mov rbx, [rax]", vec::GP},
        {"#PF then #NP", "mov rax, 0x7FFFFFFFF000\n mov rbx, [rax]", vec::PF},
        {"#DE then #NP", "xor ecx, ecx\n div ecx", vec::DE},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION(c.name) {
            Sys s(k64, std::string("start:\n ") + c.code + "\ndone:\n hlt\n");
            s.gate_not_present(c.first);
            REQUIRE(s.run() == vec::DF);
            CHECK(s.frame(0) == 0);
            CHECK(s.frame(2) == 0x10);
            REQUIRE(!s.events.empty());
            CHECK(s.events.back().vector == vec::DF);
            CHECK(s.events.back().error_code == 0);
        }
    }
}

TEST_CASE("a benign exception whose gate is not present: #NP is handled serially",
          "[system][exceptions]") {
    // #UD (benign) then #NP (contributory) while delivering it: no #DF, the #NP is
    // delivered with error code 6*8 + 2 + EXT(1) (SDM Vol. 3, Table 6-5, 6.13).
    Sys s(k64, "start:\nprobe: ud2\ndone:\n hlt\n");
    s.gate_not_present(vec::UD);
    REQUIRE(s.run() == vec::NP);
    CHECK(s.frame(0) == vec::UD * 8 + 3);
    CHECK(s.frame(1) == s.sym("probe"));
}

TEST_CASE("an external interrupt through a not-present gate: #NP with EXT=1",
          "[system][exceptions]") {
    // SDM Vol. 3, 6.13: EXT is set for an event external to the program; the IDT flag
    // (bit 1) marks a gate index: error code 40h*8 + 2 + 1. The interrupt is accepted
    // after the instruction following STI (SDM Vol. 2, STI).
    Sys s(k64, R"(
start:
    sti
probe:
    nop
    nop
done:
    hlt
)");
    s.gate_not_present(0x40);
    s.m.raise_interrupt(0x40);
    REQUIRE(s.run() == vec::NP);
    CHECK(s.frame(0) == 0x40 * 8 + 3);
    CHECK(s.frame(1) == s.sym("probe") + 1);
}

TEST_CASE("triple fault: the #DF gate is not present either", "[system][exceptions]") {
    // An exception while delivering #DF shuts the processor down (SDM Vol. 3, 6.15
    // Interrupt 8; Table 6-5).
    Sys s(k64, "start:\n mov rax, 0x0000800000000000\n mov rbx, [rax]\ndone:\n hlt\n");
    s.gate_not_present(vec::GP);
    s.gate_not_present(vec::DF);
    const RunResult r = s.run_raw();
    CHECK(r.reason == StopReason::kTripleFault);
    CHECK(s.q(0x100) == 0xFFFFFFFFFFFFFFFF);  // no handler ran
}

TEST_CASE("real mode: INT n through the IVT and IRET", "[system][exceptions]") {
    // SDM Vol. 3, 20.1.4: the IVT entry gives IP and CS; FLAGS, CS and IP are pushed
    // (16 bits each); IF, TF and AC are cleared; IRET pops them back.
    Sys s(StartPreset::kReal16, R"(
start:
    mov word [0x80 * 4], rm_int
    mov word [0x80 * 4 + 2], 0
    mov ax, 0x2000
    mov es, ax
    stc
    sti
    int 0x80
after_int:
    pushf
    pop word [es:0x10]
    mov [es:0x18], sp
done:
    hlt
rm_int:
    mov [es:0x00], sp
    pushf
    pop word [es:0x08]
    mov bp, sp
    mov ax, [bp]
    mov [es:0x20], ax
    mov ax, [bp + 2]
    mov [es:0x22], ax
    mov ax, [bp + 4]
    mov [es:0x24], ax
    iret
)");
    REQUIRE(s.run() == -1);
    CHECK(s.phys(RES + 0x00, 2) == 0x7C00 - 6);
    CHECK(s.phys(RES + 0x20, 2) == s.sym("after_int"));  // IP
    CHECK(s.phys(RES + 0x22, 2) == 0);                   // CS
    CHECK(s.phys(RES + 0x24, 2) == 0x203);               // FLAGS: IF, CF, bit 1
    CHECK(s.phys(RES + 0x08, 2) == 0x003);               // IF cleared in the handler
    CHECK(s.phys(RES + 0x10, 2) == 0x203);               // restored by IRET
    CHECK(s.phys(RES + 0x18, 2) == 0x7C00);
}

TEST_CASE("real mode: #DE through the IVT pushes the IP of the faulting DIV",
          "[system][exceptions]") {
    // SDM Vol. 3, 20.1.4 and 6.5: a fault pushes CS:IP of the faulting instruction; the
    // handler skips the 2-byte DIV and returns.
    Sys s(StartPreset::kReal16, R"(
start:
    mov word [0], de_handler
    mov word [2], 0
    mov ax, 0x2000
    mov es, ax
    xor cx, cx
probe:
    div cx
    mov word [es:0x08], 0x600D
done:
    hlt
de_handler:
    mov bp, sp
    mov ax, [bp]
    mov [es:0x00], ax
    mov [es:0x02], sp
    add word [bp], 2
    iret
)");
    REQUIRE(s.run() == -1);
    CHECK(s.phys(RES + 0x00, 2) == s.sym("probe"));
    CHECK(s.phys(RES + 0x02, 2) == 0x7C00 - 6);
    CHECK(s.phys(RES + 0x08, 2) == 0x600D);
}
