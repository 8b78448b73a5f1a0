// Privilege levels (SDM Vol. 3, ch. 5, 6; Vol. 2 instruction pages): IRET to ring 3,
// interrupts back to ring 0 with the TSS stack switch, gate checks, call gates,
// SYSENTER/SYSEXIT, SYSCALL/SYSRET, IOPL and the I/O permission bitmap,
// privileged instructions at CPL 3 and compatibility mode. Programs are NASM at
// 0x1000 on a preset; vectors 0-31 lead to a recording handler (vector at
// RES+0x100, stack pointer at RES+0x108); INT 80h (DPL 3) leads to `done`.
#include <catch2/catch.hpp>
#include <sstream>

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
    Sys(StartPreset preset, const std::string& body) : SystemFixture(preset, body, Options{.int80_to_done = true}) {}
};

/// Sets up with `setup` at CPL 0, IRETs to `user` at CPL 3 (SS:RSP = 2Bh:70000h,
/// RFLAGS = `rflags`), which ends with INT 80h. 32-bit code loads DS and ES with
/// 2Bh first: IRET to ring 3 nulls data segments with DPL < 3 (SDM Vol. 2, IRET).
std::string ring3(int bits, const std::string& setup, const std::string& user, u64 rflags = 0x202) {
    const bool b64 = bits == 64;
    std::ostringstream s;
    s << "start:\n"
      << setup << "\n push 0x2B\n push 0x70000\n push " << rflags << "\n push "
      << (b64 ? "0x33\n push user\n iretq\n" : "0x23\n push user\n iretd\n") << "user:\n"
      << (b64 ? "" : " mov ax, 0x2B\n mov ds, ax\n mov es, ax\n") << user
      << "\n int 0x80\ndone:\n hlt\n";
    return s.str();
}

/// Gives the preset TSS an I/O permission bitmap for ports 0-FFh at offset 68h that
/// allows only port 80h, plus the trailing FFh byte (SDM Vol. 1, 19.5.2), sets the
/// TSS limit to 88h, clears the busy flag and reloads TR.
const char* kIoBitmap = R"(
    mov edi, 0x102068
    mov al, 0xFF
    mov ecx, 33
    rep stosb
    and byte [0x102078], 0xFE
    mov word [0x100040], 0x88
    and byte [0x100045], 0xFD
    mov ax, 0x40
    ltr ax
)";

const char* kSetTsd64 = "mov rax, cr4\n or eax, 4\n mov cr4, rax";
const char* kSetTsd32 = "mov eax, cr4\n or eax, 4\n mov cr4, eax";

}  // namespace

TEST_CASE("32-bit: IRETD to ring 3 then INT 80h back to ring 0 with the TSS stack switch",
          "[system][privilege]") {
    Sys s(StartPreset::kProtected32, R"(
start:
    mov ax, 0x18
    mov fs, ax
    mov gs, ax
    push 0x2B
    push 0x70000
    push 0x202
    push 0x23
    push user
    iretd
user:
    mov eax, ds
    mov ebx, es
    mov ecx, fs
    mov edx, gs
    mov bp, 0x2B
    mov ds, bp
    mov [RES + 0x00], eax
    mov [RES + 0x08], ebx
    mov [RES + 0x10], ecx
    mov [RES + 0x18], edx
    mov [RES + 0x20], cs
    mov [RES + 0x28], ss
    mov [RES + 0x30], esp
    pushfd
    pop dword [RES + 0x38]
    int 0x80
after_int:
i80:
    mov [RES + 0x40], esp
    mov [RES + 0x48], cs
    mov [RES + 0x50], ss
    pushfd
    pop dword [RES + 0x58]
done:
    hlt
)");
    set_idt_gate(s.m, 0x80, s.sym("i80"), 3);
    REQUIRE(s.run() == -1);
    // IRET to an outer level loads CS, EIP, EFLAGS, SS, ESP from the stack and nulls
    // DS, ES, FS, GS whose DPL is below the new CPL (SDM Vol. 2, IRET,
    // RETURN-TO-OUTER-PRIVILEGE-LEVEL).
    CHECK(s.q(0x00) == 0);
    CHECK(s.q(0x08) == 0);
    CHECK(s.q(0x10) == 0);
    CHECK(s.q(0x18) == 0);
    CHECK(s.q(0x20) == 0x23);
    CHECK(s.q(0x28) == 0x2B);
    CHECK(s.q(0x30) == 0x70000);
    CHECK(s.q(0x38) == 0x202);
    // INT n to a DPL-0 handler from CPL 3: SS0:ESP0 from the TSS, then SS, ESP, EFLAGS,
    // CS, EIP pushed (SDM Vol. 3, 6.12.1, Figure 6-4); an interrupt gate clears IF (6.12.1.3).
    const u64 sp = s.q(0x40);
    CHECK(sp == L::kRsp0 - 5 * 4);
    CHECK(s.slot(sp, 0) == s.sym("after_int"));
    CHECK(s.slot(sp, 1) == 0x23);
    CHECK(s.slot(sp, 2) == 0x202);
    CHECK(s.slot(sp, 3) == 0x70000);
    CHECK(s.slot(sp, 4) == 0x2B);
    CHECK((s.q(0x48) & 0xFFFF) == 0x08);
    CHECK((s.q(0x50) & 0xFFFF) == 0x18);
    CHECK(s.q(0x58) == 0x002);
}

TEST_CASE("64-bit: IRETQ to ring 3 then INT 80h back to ring 0 on RSP0", "[system][privilege]") {
    Sys s(StartPreset::kLong64, R"(
start:
    push 0x2B
    push 0x70008
    push 0x202
    push 0x33
    push user
    iretq
user:
    mov [RES + 0x00], ds
    mov [RES + 0x08], es
    mov [RES + 0x20], cs
    mov [RES + 0x28], ss
    mov [RES + 0x30], rsp
    pushfq
    pop qword [RES + 0x38]
    int 0x80
after_int:
i80:
    mov [RES + 0x40], rsp
    mov [RES + 0x48], cs
    mov [RES + 0x50], ss
done:
    hlt
)");
    set_idt_gate(s.m, 0x80, s.sym("i80"), 3);
    s.put(RES, ~0ull);
    s.put(RES + 8, ~0ull);
    REQUIRE(s.run() == -1);
    // IRETQ to CPL 3 (SDM Vol. 2, IRET): data segments with DPL 0 become null.
    CHECK((s.q(0x00) & 0xFFFF) == 0);
    CHECK((s.q(0x08) & 0xFFFF) == 0);
    CHECK((s.q(0x20) & 0xFFFF) == 0x33);
    CHECK((s.q(0x28) & 0xFFFF) == 0x2B);
    CHECK(s.q(0x30) == 0x70008);
    CHECK(s.q(0x38) == 0x202);
    // IA-32e interrupt to CPL 0: RSP0 from the TSS, aligned to 16, SS:RSP always pushed;
    // the new SS is a null selector with RPL = new CPL (SDM Vol. 3, 6.14.2, 6.14.4).
    const u64 sp = s.q(0x40);
    CHECK(sp == L::kRsp0 - 5 * 8);
    CHECK(s.slot(sp, 0) == s.sym("after_int"));
    CHECK(s.slot(sp, 1) == 0x33);
    CHECK(s.slot(sp, 2) == 0x202);
    CHECK(s.slot(sp, 3) == 0x70008);
    CHECK(s.slot(sp, 4) == 0x2B);
    CHECK((s.q(0x48) & 0xFFFF) == 0x10);
    CHECK((s.q(0x50) & 0xFFFF) == 0);
}

TEST_CASE("64-bit: the RSP0 stack is aligned to 16 bytes", "[system][privilege]") {
    // SDM Vol. 3, 6.14.2: in IA-32e mode the new RSP is aligned down to 16 bytes before
    // the frame (here #UD from CPL 3: SS, RSP, RFLAGS, CS, RIP) is pushed.
    Sys s(StartPreset::kLong64, ring3(64, "", "probe: ud2"));
    s.put(L::kTss + 4, 0x10F008);
    REQUIRE(s.run() == vec::UD);
    CHECK(s.phys(RES + 0x108) == 0x10F000 - 5 * 8);
    CHECK(s.frame(0) == s.sym("probe"));
    CHECK(s.frame(3) == 0x70000);
}

TEST_CASE("IRETQ at CPL 3 changes neither IOPL nor IF when CPL > IOPL", "[system][privilege]") {
    // SDM Vol. 2, IRET Operation: IF only if CPL <= IOPL, IOPL only at CPL 0. A
    // same-level IRETQ in 64-bit mode still pops SS:RSP.
    Sys s(StartPreset::kLong64, ring3(64, "", R"(
    push 0x2B
    push 0x6F000
    push 0x3002 | 0x801
    push 0x33
    push back
    iretq
back:
    mov [RES + 0x08], rsp
    pushfq
    pop qword [RES]
)"));
    REQUIRE(s.run() == -1);
    CHECK(s.q(0x00) == (0x202 | 0x801));  // OF and CF from the frame, IF kept, IOPL kept at 0
    CHECK(s.q(0x08) == 0x6F000);
}

namespace {

struct Probe {
    const char* name;
    int bits;
    const char* setup;  ///< CPL-0 code before the IRET
    const char* user;   ///< CPL-3 code; the instruction expected to fault is at `probe`
    u64 rflags;
    int vector;  ///< -1: the CPL-3 code completes
    u32 err = 0;
};

}  // namespace

TEST_CASE("CPL 3: IOPL and the I/O permission bitmap and privileged instructions and gate checks",
          "[system][privilege]") {
    // Every fault here is taken from CPL 3 to the CPL-0 handler: error code, RIP of the
    // faulting instruction, CS, RFLAGS, RSP, SS (SDM Vol. 3, 6.12.1, 6.14.2).
    const Probe probes[] = {
        // CLI/STI: #GP(0) if CPL > IOPL (SDM Vol. 2, CLI, STI).
        {"CLI with IOPL 0 (64-bit)", 64, "", "probe: cli", 0x202, vec::GP},
        {"STI with IOPL 0 (64-bit)", 64, "", "probe: sti", 0x202, vec::GP},
        {"CLI and STI with IOPL 3 (64-bit)", 64, "", "probe: cli\n sti", 0x3202, -1},
        {"CLI with IOPL 0 (32-bit)", 32, "", "probe: cli", 0x202, vec::GP},
        {"STI with IOPL 3 (32-bit)", 32, "", "probe: cli\n sti", 0x3202, -1},
        // Privileged instructions: #GP(0) at CPL > 0 (SDM Vol. 2, each instruction; Vol. 3, 5.9).
        {"HLT", 64, "", "probe: hlt", 0x202, vec::GP},
        {"HLT (32-bit)", 32, "", "probe: hlt", 0x202, vec::GP},
        {"MOV CR0, RAX", 64, "", "mov eax, 0x80050033\nprobe: mov cr0, rax", 0x202, vec::GP},
        {"MOV RAX, CR0", 64, "", "probe: mov rax, cr0", 0x202, vec::GP},
        {"MOV RAX, DR7", 64, "", "probe: mov rax, dr7", 0x202, vec::GP},
        {"RDMSR", 64, "", "mov ecx, 0xC0000080\nprobe: rdmsr", 0x202, vec::GP},
        {"WRMSR", 64, "", "mov ecx, 0xC0000080\nprobe: wrmsr", 0x202, vec::GP},
        {"LGDT", 64, "", "probe: lgdt [rsp]", 0x202, vec::GP},
        {"LIDT", 64, "", "probe: lidt [rsp]", 0x202, vec::GP},
        {"LTR", 64, "", "mov ax, 0x40\nprobe: ltr ax", 0x202, vec::GP},
        {"INVLPG", 64, "", "probe: invlpg [0x20000]", 0x202, vec::GP},
        {"CLTS", 64, "", "probe: clts", 0x202, vec::GP},
        // RDTSC: #GP(0) if CR4.TSD = 1 and CPL > 0 (SDM Vol. 2, RDTSC).
        {"RDTSC with CR4.TSD=1", 64, kSetTsd64, "probe: rdtsc", 0x202, vec::GP},
        {"RDTSC with CR4.TSD=1 (32-bit)", 32, kSetTsd32, "probe: rdtsc", 0x202, vec::GP},
        {"RDTSC with CR4.TSD=0", 64, "", "probe: rdtsc", 0x202, -1},
        // IN/OUT at CPL > IOPL: every bitmap bit of the accessed ports must be 0; the
        // bitmap must lie within the TSS limit (SDM Vol. 1, 19.5.2; Vol. 2, IN/OUT).
        {"IN without an I/O bitmap (I/O map base = limit + 1)", 64, "", "probe: in al, 0x80", 0x202,
         vec::GP},
        {"IN/OUT to an allowed port", 64, kIoBitmap,
         "in al, 0x80\n out 0x80, al\n mov dx, 0x80\n in al, dx", 0x202, -1},
        {"IN from a denied port", 64, kIoBitmap, "probe: in al, 0x81", 0x202, vec::GP},
        {"word IN covering an allowed and a denied port", 64, kIoBitmap, "probe: in ax, 0x80",
         0x202, vec::GP},
        {"OUT to a port beyond the bitmap", 64, kIoBitmap, "mov dx, 0x3F8\nprobe: out dx, al",
         0x202, vec::GP},
        {"IN from a denied port with IOPL 3", 64, kIoBitmap, "in al, 0x81\n in eax, 0x84", 0x3202,
         -1},
        {"IN/OUT to an allowed port (32-bit)", 32, kIoBitmap, "in al, 0x80\n out 0x80, al", 0x202,
         -1},
        {"OUT to a denied port (32-bit)", 32, kIoBitmap, "probe: out 0x60, al", 0x202, vec::GP},
        // INT n: gate DPL < CPL -> #GP(vector * 8 + 2) before the present check; a
        // not-present gate -> #NP(vector * 8 + 2), EXT = 0 for INT n (SDM Vol. 2, INT n
        // Operation; Vol. 3, 6.12.1.1, 6.13).
        {"INT 81h to a DPL-0 gate", 64, "", "probe: int 0x81", 0x202, vec::GP, 0x81 * 8 + 2},
        {"INT 82h to a not-present DPL-3 gate", 64, "", "probe: int 0x82", 0x202, vec::NP,
         0x82 * 8 + 2},
        {"INT 83h to a not-present DPL-0 gate", 64, "", "probe: int 0x83", 0x202, vec::GP,
         0x83 * 8 + 2},
        {"INT3 to a DPL-0 gate", 64, "", "probe: int3", 0x202, vec::GP, vec::BP * 8 + 2},
        {"INT 81h to a DPL-0 gate (32-bit)", 32, "", "probe: int 0x81", 0x202, vec::GP,
         0x81 * 8 + 2},
        {"INT 82h to a not-present DPL-3 gate (32-bit)", 32, "", "probe: int 0x82", 0x202, vec::NP,
         0x82 * 8 + 2},
        // Far CALL through a call gate: gate DPL < CPL -> #GP(gate selector); not present
        // -> #NP(gate selector) (SDM Vol. 2, CALL Operation; Vol. 3, 5.8.4).
        {"CALL through a DPL-0 call gate", 64, "",
         "mov word [RES + 0x304], 0x53\nprobe: call far dword [RES + 0x300]", 0x202, vec::GP, 0x50},
        {"CALL through a not-present call gate", 64, "",
         "mov word [RES + 0x304], 0x63\nprobe: call far dword [RES + 0x300]", 0x202, vec::NP, 0x60},
        {"CALL through a DPL-0 call gate (32-bit)", 32, "",
         "mov word [RES + 0x304], 0x53\nprobe: call far dword [RES + 0x300]", 0x202, vec::GP, 0x50},
        {"CALL through a not-present call gate (32-bit)", 32, "",
         "mov word [RES + 0x304], 0x63\nprobe: call far dword [RES + 0x300]", 0x202, vec::NP, 0x60},
        // Segment loads at CPL 3 (SDM Vol. 2, MOV): DPL 0 data -> #GP(selector).
        {"MOV DS with a DPL-0 data segment", 64, "", "mov ax, 0x18\nprobe: mov ds, ax", 0x202,
         vec::GP, 0x18},
        {"MOV SS with a DPL-0 data segment (32-bit)", 32, "", "mov ax, 0x18\nprobe: mov ss, ax",
         0x202, vec::GP, 0x18},
        // Fast system calls and SWAPGS from CPL 3: #GP(0) (SDM Vol. 2, SYSRET, SYSEXIT, SWAPGS).
        {"SYSRET", 64, "", "mov ecx, user\nprobe: o64 sysret", 0x202, vec::GP},
        {"SYSEXIT", 64, "", "probe: sysexit", 0x202, vec::GP},
        {"SWAPGS", 64, "", "probe: swapgs", 0x202, vec::GP},
    };
    for (const Probe& p : probes) {
        DYNAMIC_SECTION(p.name) {
            Sys s(p.bits == 64 ? StartPreset::kLong64 : StartPreset::kProtected32,
                  ring3(p.bits, p.setup, p.user, p.rflags));
            set_idt_gate(s.m, 0x82, s.sym("done"), 3);
            s.gate_not_present(0x82);
            s.gate_not_present(0x83);
            // Call gates to `done` (SDM Vol. 3, 5.8.3): 50h DPL 0, 60h DPL 3 not present;
            // 16 bytes in IA-32e mode, 8 (32-bit gate) otherwise.
            const u64 d = s.sym("done"), cs = p.bits == 64 ? 0x10 : 0x08;
            const u64 gate = (d & 0xFFFF) | (cs << 16) | (0x8Cull << 40) | ((d >> 16) << 48);
            s.gdt(10, gate);
            s.gdt(11, 0);
            s.gdt(12, (gate | (3ull << 45)) & ~(1ull << 47));
            s.gdt(13, 0);
            const int vector = s.run();
            CHECK(vector == p.vector);
            if (p.vector < 0 || vector != p.vector) continue;
            CHECK(s.frame(0) == p.err);
            CHECK(s.frame(1) == s.sym("probe"));
            CHECK(s.frame(2) == (p.bits == 64 ? 0x33u : 0x23u));
            CHECK(s.frame(3) == p.rflags);
            CHECK(s.frame(4) == 0x70000);
            CHECK(s.frame(5) == 0x2B);
        }
    }
}

TEST_CASE("INT1 (ICEBP) at CPL 3 is not subject to the gate DPL check", "[system][privilege]") {
    // SDM Vol. 2, INT n/INTO/INT3/INT1 Operation: the gate DPL check applies to INT n,
    // INT3 and INTO only; INT1 delivers #DB as a trap (RIP of the next instruction).
    Sys s(StartPreset::kLong64, ring3(64, "", "probe: int1"));
    REQUIRE(s.run() == vec::DB);
    CHECK(s.frame(0) == s.sym("probe") + 1);
    CHECK(s.frame(1) == 0x33);
    CHECK(s.frame(3) == 0x70000);
    CHECK(s.frame(4) == 0x2B);
}

TEST_CASE("32-bit call gate from ring 3 to ring 0 with 2 parameters and RETF 8 back",
          "[system][privilege]") {
    Sys s(StartPreset::kProtected32, ring3(32, "", R"(
    mov ax, 0x2B
    mov fs, ax
    push 0x1111
    push 0x2222
    call 0x53:0
back:
    mov [RES + 0x00], esp
    mov [RES + 0x08], es
    mov [RES + 0x10], fs
    mov [RES + 0x18], ds
    mov [RES + 0x20], cs
    mov [RES + 0x28], ss
    jmp short gate_end
gate_target:
    mov [RES + 0x40], esp
    mov esi, esp
    mov edi, RES + 0x200
    mov ecx, 6
    rep movsd                   ; the frame, before INT 80h reuses the ring-0 stack
    mov [RES + 0x48], cs
    mov [RES + 0x50], ss
    mov ax, 0x18
    mov es, ax
    retf 8
gate_end:
)"));
    // Call gate (SDM Vol. 3, 5.8.3, Figure 5-8): selector 08h, parameter count 2, type
    // 0Ch (32-bit), DPL 3, present; at GDT index 10 (selector 53h with RPL 3).
    const u64 off = s.sym("gate_target");
    s.gdt(10,
          (off & 0xFFFF) | (0x08ull << 16) | (2ull << 32) | (0xECull << 40) | ((off >> 16) << 48));
    REQUIRE(s.run() == -1);
    // The callee stack: SS0:ESP0 from the TSS; caller SS, ESP, the 2 parameters in
    // their order, CS, EIP (SDM Vol. 3, 5.8.5, Figure 5-13); CPL = target DPL 0.
    const u64 sp = s.q(0x40);
    CHECK(sp == L::kRsp0 - 6 * 4);
    const u64 copy = RES + 0x200;
    CHECK(s.slot(copy, 0) == s.sym("back"));
    CHECK(s.slot(copy, 1) == 0x23);
    CHECK(s.slot(copy, 2) == 0x2222);
    CHECK(s.slot(copy, 3) == 0x1111);
    CHECK(s.slot(copy, 4) == 0x70000 - 8);
    CHECK(s.slot(copy, 5) == 0x2B);
    CHECK((s.q(0x48) & 0xFFFF) == 0x08);
    CHECK((s.q(0x50) & 0xFFFF) == 0x18);
    // RETF 8 to ring 3 pops EIP, CS, releases 8 bytes, pops ESP, SS, releases 8 bytes
    // of the caller's parameters; ES (DPL 0 < CPL 3) becomes null, FS and DS (DPL 3)
    // stay (SDM Vol. 2, RET, RETURN-TO-OUTER-PRIVILEGE-LEVEL).
    CHECK(s.q(0x00) == 0x70000);
    CHECK((s.q(0x08) & 0xFFFF) == 0);
    CHECK((s.q(0x10) & 0xFFFF) == 0x2B);
    CHECK((s.q(0x18) & 0xFFFF) == 0x2B);
    CHECK((s.q(0x20) & 0xFFFF) == 0x23);
    CHECK((s.q(0x28) & 0xFFFF) == 0x2B);
}

TEST_CASE("64-bit call gate from ring 3 to ring 0 and RETFQ back", "[system][privilege]") {
    Sys s(StartPreset::kLong64, ring3(64, "", R"(
    call far dword [gate_ptr]
back:
    mov [RES + 0x00], rsp
    mov [RES + 0x08], cs
    mov [RES + 0x10], ss
    jmp short gate_end
gate_ptr:
    dd 0
    dw 0x53
gate_target:
    mov [RES + 0x40], rsp
    mov [RES + 0x48], cs
    mov [RES + 0x50], ss
    mov rsi, rsp
    mov edi, RES + 0x200
    mov ecx, 4
    rep movsq                   ; the frame, before INT 80h reuses the ring-0 stack
    o64 retf
gate_end:
)"));
    // IA-32e call gate (SDM Vol. 3, 5.8.3.1, Figure 5-9): 16 bytes, type 0Ch, DPL 3,
    // target selector 10h (64-bit code); at GDT index 10-11 (selector 53h, RPL 3).
    const u64 off = s.sym("gate_target");
    s.gdt(10, (off & 0xFFFF) | (0x10ull << 16) | (0xECull << 40) | ((off >> 16) << 48));
    s.gdt(11, off >> 32);
    s.put(RES + 0x10, ~0ull);
    s.put(RES + 0x50, ~0ull);
    REQUIRE(s.run() == -1);
    // Stack switch to RSP0 with a null SS (RPL = new CPL); old SS, RSP, CS, RIP pushed as
    // quadwords; no parameters are copied (SDM Vol. 3, 5.8.5, 5.8.6, Figure 5-14).
    CHECK(s.q(0x40) == L::kRsp0 - 4 * 8);
    CHECK((s.q(0x48) & 0xFFFF) == 0x10);
    CHECK((s.q(0x50) & 0xFFFF) == 0);
    const u64 copy = RES + 0x200;
    CHECK(s.slot(copy, 0) == s.sym("back"));
    CHECK(s.slot(copy, 1) == 0x33);
    CHECK(s.slot(copy, 2) == 0x70000);
    CHECK(s.slot(copy, 3) == 0x2B);
    // RETFQ to CPL 3 pops RIP, CS, RSP, SS (SDM Vol. 2, RET).
    CHECK(s.q(0x00) == 0x70000);
    CHECK((s.q(0x08) & 0xFFFF) == 0x33);
    CHECK((s.q(0x10) & 0xFFFF) == 0x2B);
}

TEST_CASE("32-bit SYSEXIT to ring 3 and SYSENTER back", "[system][privilege]") {
    // IA32_SYSENTER_CS = 10h so the SYSEXIT selectors (CS+16, CS+24, RPL 3) are the
    // preset's ring-3 code and data (SDM Vol. 2, SYSENTER, SYSEXIT).
    Sys s(StartPreset::kProtected32, R"(
start:
    xor edx, edx
    mov ecx, 0x174
    mov eax, 0x10
    wrmsr
    mov ecx, 0x175
    mov eax, 0x10F000
    wrmsr
    mov ecx, 0x176
    mov eax, kentry
    wrmsr
    mov ecx, 0x70000
    mov edx, user
    sti
    sysexit
user:
    mov [RES + 0x00], cs
    mov [RES + 0x08], ss
    mov [RES + 0x10], esp
    pushfd
    pop dword [RES + 0x18]
    sysenter
kentry:
    mov [RES + 0x20], cs
    mov [RES + 0x28], ss
    mov [RES + 0x30], esp
    pushfd
    pop dword [RES + 0x38]
done:
    hlt
)");
    REQUIRE(s.run() == -1);
    // SYSEXIT: CS = SYSENTER_CS + 16 | 3, SS = SYSENTER_CS + 24 | 3, ESP = ECX, EIP = EDX;
    // EFLAGS unchanged (IF from STI, ZF and PF from XOR).
    CHECK((s.q(0x00) & 0xFFFF) == 0x23);
    CHECK((s.q(0x08) & 0xFFFF) == 0x2B);
    CHECK(s.q(0x10) == 0x70000);
    CHECK(s.q(0x18) == 0x246);
    // SYSENTER: CS = SYSENTER_CS & FFFCh, SS = CS + 8, ESP/EIP from the MSRs; IF, VM,
    // RF cleared.
    CHECK((s.q(0x20) & 0xFFFF) == 0x10);
    CHECK((s.q(0x28) & 0xFFFF) == 0x18);
    CHECK(s.q(0x30) == 0x10F000);
    CHECK(s.q(0x38) == 0x046);
    CHECK(s.m.cpu().cpl == 0);
}

TEST_CASE("64-bit SYSEXIT with REX.W to 64-bit ring 3 and without to compatibility mode",
          "[system][privilege]") {
    // The long64 preset has IA32_SYSENTER_CS = 10h (SDM Vol. 2, SYSENTER, SYSEXIT).
    Sys s(StartPreset::kLong64, R"(
start:
    xor edx, edx
    mov ecx, 0x175
    mov eax, 0x10F000
    wrmsr
    mov ecx, 0x176
    mov eax, kentry
    wrmsr
    mov rcx, 0x70000
    mov rdx, user64
    o64 sysexit
user64:
    mov [RES + 0x00], cs
    mov [RES + 0x08], ss
    mov [RES + 0x10], rsp
    sysenter
kentry:
    inc dword [RES + 0x80]
    cmp dword [RES + 0x80], 2
    je second
    mov [RES + 0x20], cs
    mov [RES + 0x28], ss
    mov [RES + 0x30], rsp
    mov ecx, 0x6F000
    mov edx, user32
    sysexit
second:
    mov [RES + 0x60], cs
    mov [RES + 0x68], rsp
done:
    hlt
bits 32
user32:
    mov [RES + 0x40], cs
    mov [RES + 0x48], ss
    mov [RES + 0x50], esp
    mov eax, 5
    dec eax
    db 0x48                     ; DEC EAX in compatibility mode, not REX.W
    mov [RES + 0x58], eax
    sysenter
)");
    REQUIRE(s.run() == -1);
    // REX.W SYSEXIT: CS = SYSENTER_CS + 32 | 3 (64-bit code), SS = SYSENTER_CS + 40 | 3,
    // RSP = RCX, RIP = RDX.
    CHECK((s.q(0x00) & 0xFFFF) == 0x33);
    CHECK((s.q(0x08) & 0xFFFF) == 0x3B);
    CHECK(s.q(0x10) == 0x70000);
    // SYSENTER in IA-32e mode: CS = 10h with L=1, SS = 18h, RSP = IA32_SYSENTER_ESP.
    CHECK((s.q(0x20) & 0xFFFF) == 0x10);
    CHECK((s.q(0x28) & 0xFFFF) == 0x18);
    CHECK(s.q(0x30) == 0x10F000);
    // SYSEXIT without REX.W: CS = SYSENTER_CS + 16 | 3 (32-bit, compatibility mode),
    // SS = SYSENTER_CS + 24 | 3, ESP = ECX.
    CHECK((s.q(0x40) & 0xFFFF) == 0x23);
    CHECK((s.q(0x48) & 0xFFFF) == 0x2B);
    CHECK(s.q(0x50) == 0x6F000);
    CHECK(s.q(0x58) == 3);
    // SYSENTER from compatibility mode enters 64-bit mode (SDM Vol. 2, SYSENTER).
    CHECK((s.q(0x60) & 0xFFFF) == 0x10);
    CHECK(s.q(0x68) == 0x10F000);
    CHECK(s.m.cpu().code_bits == CodeBits::k64);
}

TEST_CASE("SYSRET to 64-bit ring 3 and SYSCALL back and SYSRET to compatibility mode",
          "[system][privilege]") {
    // The long64 preset: IA32_STAR = 0023'0010'00000000h, EFER.SCE = 1.
    Sys s(StartPreset::kLong64, R"(
start:
    xor edx, edx
    mov ecx, 0xC0000082
    mov eax, sc_entry
    wrmsr
    mov ecx, 0xC0000084
    mov eax, 0x201
    wrmsr
    mov rcx, user64
    mov r11, 0x2C3
    o64 sysret
user64:
    mov [RES + 0x00], cs
    mov [RES + 0x08], ss
    pushfq
    pop qword [RES + 0x10]
    mov [RES + 0x18], rsp
    syscall
after_sc:
sc_entry:
    mov [RES + 0x20], rcx
    mov [RES + 0x28], r11
    mov [RES + 0x30], cs
    mov [RES + 0x38], ss
    pushfq
    pop qword [RES + 0x40]
    mov rcx, 0xFFFFFFFF00000000 + user32
    mov r11, 0x10202
    sysret
bits 32
user32:
    mov [RES + 0x48], cs
    mov [RES + 0x50], ss
    pushfd
    pop dword [RES + 0x58]
    mov eax, 5
    db 0x48, 0x05               ; DEC EAX; ADD EAX, 10h (REX.W ADD RAX in 64-bit mode)
    dd 0x10
    mov [RES + 0x60], eax
    int 0x80
after_int:
bits 64
i80:
    mov [RES + 0x68], rsp
done:
    hlt
)");
    set_idt_gate(s.m, 0x80, s.sym("i80"), 3);
    REQUIRE(s.run() == -1);
    // SYSRET with REX.W: CS = STAR[63:48] + 16 | 3, SS = STAR[63:48] + 8 | 3,
    // RFLAGS = (R11 & 3C7FD7h) | 2, RIP = RCX; RSP unchanged (SDM Vol. 2, SYSRET).
    CHECK((s.q(0x00) & 0xFFFF) == 0x33);
    CHECK((s.q(0x08) & 0xFFFF) == 0x2B);
    CHECK(s.q(0x10) == 0x2C3);
    CHECK(s.q(0x18) == 0x80000);
    // SYSCALL: RCX = next RIP, R11 = RFLAGS, CS = STAR[47:32], SS = STAR[47:32] + 8,
    // RFLAGS &= ~IA32_FMASK (SDM Vol. 2, SYSCALL).
    CHECK(s.q(0x20) == s.sym("after_sc"));
    CHECK(s.q(0x28) == 0x2C3);
    CHECK((s.q(0x30) & 0xFFFF) == 0x10);
    CHECK((s.q(0x38) & 0xFFFF) == 0x18);
    CHECK(s.q(0x40) == 0x0C2);
    // SYSRET without REX.W: CS = STAR[63:48] | 3 (32-bit code, compatibility mode),
    // EIP = ECX (upper half of RCX dropped), RF masked out of R11.
    CHECK((s.q(0x48) & 0xFFFF) == 0x23);
    CHECK((s.q(0x50) & 0xFFFF) == 0x2B);
    CHECK(s.q(0x58) == 0x202);
    CHECK(s.q(0x60) == 0x14);
    // INT 80h from compatibility mode: 64-bit frame on RSP0 (SDM Vol. 3, 6.14).
    const u64 sp = s.q(0x68);
    CHECK(sp == L::kRsp0 - 5 * 8);
    CHECK(s.slot(sp, 0) == s.sym("after_int"));
    CHECK(s.slot(sp, 1) == 0x23);
    CHECK(s.slot(sp, 3) == 0x80000);
    CHECK(s.slot(sp, 4) == 0x2B);
}

TEST_CASE("compatibility mode: RETFQ to a 32-bit code segment and JMP FAR back to 64-bit",
          "[system][privilege]") {
    // SDM Vol. 3, 5.2.1 / 3.4.5: in IA-32e mode CS.L selects 64-bit mode; with L=0 and
    // D=1 the code runs in compatibility mode, where 48h is DEC EAX (Vol. 2, 2.2.1: REX
    // prefixes exist only in 64-bit mode).
    Sys s(StartPreset::kLong64, R"(
start:
    mov eax, 5
    db 0x48, 0x05
    dd 0x10                     ; ADD RAX, 10h
    mov [RES + 0x00], rax
    push 0x08
    push compat
    retfq
bits 32
compat:
    mov eax, 5
    db 0x48, 0x05
    dd 0x10                     ; DEC EAX; ADD EAX, 10h
    mov [RES + 0x08], eax
    mov [RES + 0x10], cs
    mov [RES + 0x18], esp
    push 0x12345678
    pop dword [RES + 0x20]
    jmp 0x10:back64
bits 64
back64:
    mov [RES + 0x28], cs
    mov [RES + 0x30], rsp
done:
    hlt
)");
    REQUIRE(s.run() == -1);
    CHECK(s.q(0x00) == 0x15);
    CHECK(s.q(0x08) == 0x14);
    CHECK((s.q(0x10) & 0xFFFF) == 0x08);
    CHECK(s.q(0x18) == 0x80000);
    CHECK(s.q(0x20) == 0x12345678);  // 32-bit push/pop in compatibility mode
    CHECK((s.q(0x28) & 0xFFFF) == 0x10);
    CHECK(s.q(0x30) == 0x80000);
    CHECK(s.m.cpu().code_bits == CodeBits::k64);
}
