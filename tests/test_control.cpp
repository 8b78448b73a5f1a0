// JMP, Jcc, JCXZ/JECXZ/JRCXZ, LOOP/LOOPE/LOOPNE, CALL, RET (SDM Vol. 2 instruction
// pages; Vol. 1, 6.3). Near branches in 64-bit mode use a 64-bit operand size, and a
// non-canonical target raises #GP(0) on the branch itself. 16-bit code wraps IP at 64 KiB.
#include "tests/unit_common.h"

using namespace pmusim;
using namespace pmusim::unit;

namespace {
constexpr u64 d = kDataBase;
constexpr u64 top = kStackTop;

/// A program that records, for each of the 16 conditions, whether Jcc was taken
/// (1) or not (0) in the byte at [base + k]. `near` selects the rel32/rel16 form.
std::string jcc_program(const char* base, bool near) {
    std::string s;
    for (int k = 0; k < 16; ++k) {
        const std::string n = std::to_string(k), at = std::string("[") + base + "+" + n + "]";
        s += std::string("j") + kConds[k].name + (near ? " near" : " short") + " t" + n + "\n";
        s += "mov byte " + at + ", 0\njmp short n" + n + "\n";
        s += "t" + n + ": mov byte " + at + ", 1\nn" + n + ":\n";
    }
    return s + "hlt";
}

}  // namespace

TEST_CASE("Jcc: all 16 conditions taken and not taken", "[control]") {
    struct Mode {
        int bits;
        const char* base;
        Gpr reg;
        u64 addr;
    };
    for (const Mode& m :
         {Mode{64, "rdi", RDI, d}, Mode{32, "edi", RDI, d}, Mode{16, "di", RDI, 0x8000}}) {
        for (bool near : {false, true}) {
            const std::string src = jcc_program(m.base, near);
            for (u64 f : kCondStates) {
                auto r = run_ok(m.bits, src,
                                {.regs = {{m.reg, m.addr}},
                                 .flags = f,
                                 .mem = {{m.addr, ~0ull}, {m.addr + 8, ~0ull}}});
                for (int k = 0; k < 16; ++k) {
                    INFO(m.bits << "-bit j" << kConds[k].name << (near ? " near" : " short")
                                << " flags " << Catch::StringMaker<Flags>::convert(Flags{f}));
                    CHECK(mem8(r, m.addr + k) == (kConds[k].holds(f) ? 1u : 0u));
                }
            }
        }
    }
}

TEST_CASE("JMP relative and indirect", "[control]") {
    SECTION("rel8 and rel32, forward and backward") {
        auto r = run_ok(64, R"(
            jmp short a
            ud2
        a:  jmp near b
            ud2
        c:  mov ebx, 3
            hlt
            ud2
        b:  jmp c
            ud2)");
        CHECK_HEX(r.reg(RBX), 3);
        CHECK(r.run.instructions == 5);
    }
    SECTION("jmp r64, jmp m64, jmp [rip+disp]") {
        auto r = run_ok(64, R"(
            mov rax, a
            jmp rax
            ud2
        a:  mov rcx, b
            mov [rbx], rcx
            jmp [rbx]
            ud2
        b:  jmp [rel ptr]
            ud2
        c:  hlt
        ptr: dq c)",
                        {.regs = {{RBX, d}}});
        CHECK(r.run.instructions == 7);
    }
    SECTION("32-bit code: jmp r32, jmp m32") {
        auto r =
            run_ok(32, "mov eax, a\njmp eax\nud2\na: mov dword [ebx], b\njmp [ebx]\nud2\nb: hlt",
                   {.regs = {{RBX, d}}});
        CHECK(r.run.instructions == 5);
    }
    SECTION("16-bit code: jmp r16, jmp m16") {
        auto r = run_ok(16, "mov ax, a\njmp ax\nud2\na: mov word [bx], b\njmp [bx]\nud2\nb: hlt",
                        {.regs = {{RBX, 0x8000}}});
        CHECK(r.run.instructions == 5);
    }
    SECTION("flags are unaffected") {
        auto r = run_ok(64, "jmp a\na: hlt", {.flags = kAll6});
        CHECK_FLAGS(r, ~0ull, kAll6 | kFixed1);
    }
}

TEST_CASE("JCXZ, JECXZ, JRCXZ test the count register of the address size", "[control]") {
    struct Case {
        int bits;
        const char* insn;
        u64 rcx;
        bool taken;
    };
    const Case cases[] = {
        {64, "jrcxz t", 0, true},           {64, "jrcxz t", 0x100000000, false},
        {64, "jecxz t", 0x100000000, true},  // 67 E3: ECX
        {64, "jecxz t", 0x1, false},        {32, "jecxz t", 0x0, true},
        {32, "jecxz t", 0x10000, false},    {32, "jcxz t", 0x10000, true},  // 67 E3: CX
        {16, "jcxz t", 0x10000, true},      {16, "jcxz t", 0x1, false},
        {16, "jecxz t", 0x10000, false},  // 67 E3 in 16-bit code: ECX
    };
    for (const Case& c : cases) {
        INFO(c.bits << "-bit " << c.insn << std::hex << " rcx=" << c.rcx);
        auto r = run_ok(c.bits, std::string(c.insn) + "\nmov eax, 1\nhlt\nt: mov eax, 2\nhlt",
                        {.regs = {{RCX, c.rcx}}});
        CHECK_HEX(r.reg(RAX) & 0xFF, c.taken ? 2 : 1);
        CHECK_HEX(r.reg(RCX), c.rcx);  // not modified
    }
}

TEST_CASE("LOOP, LOOPE, LOOPNE", "[control]") {
    SECTION("loop counts RCX down and leaves the flags") {
        auto r = run_ok(64, "l: lea eax, [rax+1]\nloop l\nhlt",
                        {.regs = {{RAX, 0}, {RCX, 3}}, .flags = ZF | CF});
        CHECK_HEX(r.reg(RAX), 3);
        CHECK_HEX(r.reg(RCX), 0);
        CHECK_FLAGS(r, ~0ull, ZF | CF | kFixed1);
    }
    SECTION("loop with 67 uses ECX (and writes it zero-extended)") {
        auto r = run_ok(64, "l: lea eax, [rax+1]\na32 loop l\nhlt",
                        {.regs = {{RAX, 0}, {RCX, 0xFFFFFFFF00000002}}});
        CHECK_HEX(r.reg(RAX), 2);
        CHECK_HEX(r.reg(RCX), 0);
    }
    SECTION("32-bit code: loop with ECX, and with CX (67)") {
        auto r = run_ok(32, "l: inc eax\nloop l\nhlt", {.regs = {{RAX, 0}, {RCX, 4}}});
        CHECK_HEX(r.reg(RAX) & 0xFFFFFFFF, 4);
        auto s = run_ok(32, "l: inc eax\na16 loop l\nhlt", {.regs = {{RAX, 0}, {RCX, 0x10001}}});
        CHECK_HEX(s.reg(RAX) & 0xFFFFFFFF, 1);
        CHECK_HEX(s.reg(RCX) & 0xFFFFFFFF, 0x10000);
    }
    SECTION("16-bit code: loop with CX keeps bits 31:16") {
        auto r = run_ok(16, "l: inc ax\nloop l\nhlt", {.regs = {{RAX, 0}, {RCX, 0xABCD0002}}});
        CHECK_HEX(r.reg(RAX) & 0xFFFF, 2);
        CHECK_HEX(r.reg(RCX) & 0xFFFFFFFF, 0xABCD0000);
    }
    SECTION("loopne stops when ZF becomes 1") {
        auto r =
            run_ok(64, "l: inc eax\ncmp eax, 3\nloopne l\nhlt", {.regs = {{RAX, 0}, {RCX, 5}}});
        CHECK_HEX(r.reg(RAX), 3);
        CHECK_HEX(r.reg(RCX), 2);
    }
    SECTION("loope continues while ZF is 1") {
        auto r =
            run_ok(64, "l: inc edx\ntest edx, 4\nloope l\nhlt", {.regs = {{RDX, 0}, {RCX, 10}}});
        CHECK_HEX(r.reg(RDX), 4);
        CHECK_HEX(r.reg(RCX), 6);
    }
    SECTION("loope and loopne also stop when the count reaches 0") {
        auto r =
            run_ok(64, "l: inc edx\ncmp eax, eax\nloope l\nhlt", {.regs = {{RDX, 0}, {RCX, 3}}});
        CHECK_HEX(r.reg(RDX), 3);
        CHECK_HEX(r.reg(RCX), 0);
        auto s = run_ok(64, "l: inc edx\nloopne l\nhlt", {.regs = {{RDX, 0}, {RCX, 3}}});
        CHECK_HEX(s.reg(RDX), 3);
        CHECK_HEX(s.reg(RCX), 0);
    }
}

TEST_CASE("CALL and RET", "[control]") {
    SECTION("call rel32 pushes the return address; ret pops it") {
        auto r = run_ok(64, R"(
            mov r15, after
            call f
        after:
            hlt
        f:  mov rax, [rsp]
            mov rbx, rsp
            ret)");
        CHECK_HEX(r.reg(RAX), r.reg(R15));
        CHECK_HEX(r.reg(RBX), top - 8);
        CHECK_HEX(r.reg(RSP), top);
        CHECK(r.run.instructions == 6);
    }
    SECTION("call r64 and call m64") {
        auto r = run_ok(64, R"(
            mov rax, f
            call rax
            mov rcx, g
            mov [rbx], rcx
            call [rbx]
            hlt
        f:  inc rdx
            ret
        g:  add rdx, 10
            ret)",
                        {.regs = {{RBX, d}, {RDX, 0}}});
        CHECK_HEX(r.reg(RDX), 11);
        CHECK_HEX(r.reg(RSP), top);
    }
    SECTION("call [rsp] reads the target before pushing") {
        auto r = run_ok(64, "mov rax, f\npush rax\ncall [rsp]\nhlt\nf: mov rbx, rsp\nret", {});
        CHECK_HEX(r.reg(RBX), top - 16);
    }
    SECTION("ret imm16 releases the arguments") {
        auto r = run_ok(64, "push 1\npush 2\ncall g\nhlt\ng: ret 16");
        CHECK_HEX(r.reg(RSP), top);
    }
    SECTION("32-bit code: 4-byte return addresses") {
        auto r =
            run_ok(32, "mov edi, after\ncall f\nafter: hlt\nf: mov eax, [esp]\nmov ebx, esp\nret 4",
                   {.regs = {{RSP, top}}});
        CHECK_HEX(r.reg(RAX) & 0xFFFFFFFF, r.reg(RDI) & 0xFFFFFFFF);
        CHECK_HEX(r.reg(RBX) & 0xFFFFFFFF, top - 4);
        CHECK_HEX(r.reg(RSP) & 0xFFFFFFFF, top + 4);
    }
    SECTION("16-bit code: 2-byte return addresses") {
        auto r = run_ok(
            16, "mov di, after\ncall f\nafter: hlt\nf: mov bx, sp\nmov si, bx\nmov ax, [si]\nret");
        CHECK_HEX(r.reg(RAX) & 0xFFFF, r.reg(RDI) & 0xFFFF);
        CHECK_HEX(r.reg(RBX) & 0xFFFF, 0xFFF0 - 2);
        CHECK_HEX(r.reg(RSP) & 0xFFFF, 0xFFF0);
    }
    SECTION("16-bit code: call r16 and ret imm16") {
        auto r = run_ok(16, "mov ax, f\npush ax\ncall ax\nhlt\nf: ret 2");
        CHECK_HEX(r.reg(RSP) & 0xFFFF, 0xFFF0);
    }
}

TEST_CASE("Non-canonical branch targets in 64-bit mode raise #GP(0) at the branch", "[control]") {
    // SDM JMP/CALL/RET, 64-Bit Mode Exceptions: "#GP(0) If the target address is not in
    // canonical form"; the exception is taken on the branch, so RIP points at it.
    SECTION("jmp r64") {
        auto r =
            run_fault(64, "mov rax, 0x0000800000000000\njmp rax\nhlt", vec::GP, kCodeBase + 10);
        CHECK(r.run.fault->error_code == 0);
        CHECK(r.run.instructions == 1);
    }
    SECTION("jmp m64") {
        run_fault(64, "jmp [rbx]\nhlt", vec::GP, kCodeBase,
                  {.regs = {{RBX, d}}, .mem = {{d, 0xFFFF7FFFFFFFFFFF}}});
    }
    SECTION("call r64: nothing is pushed") {
        auto r = run_fault(64, "call rax\nhlt", vec::GP, kCodeBase,
                           {.regs = {{RAX, 0x8000000000000000}}});
        CHECK_HEX(r.reg(RSP), top);
    }
    SECTION("ret: RSP is unchanged") {
        auto r = run_fault(64, "ret\nhlt", vec::GP, kCodeBase,
                           {.regs = {{RSP, 0x7FF00}}, .mem = {{0x7FF00, 0x0001000000000000}}});
        CHECK_HEX(r.reg(RSP), 0x7FF00);
    }
}

TEST_CASE("16-bit code: IP wraps at 64 KiB", "[control]") {
    SECTION("execution runs from 0xFFFF to 0x0000") {
        // jmp to 0xFFFE: two NOPs at 0xFFFE/0xFFFF, then HLT at 0x0000.
        auto r =
            run_ok(16, "jmp near 0xFFFE", {.bytes = {{0xFFFE, {0x90, 0x90}}, {0x0000, {0xF4}}}});
        CHECK_HEX(r.run.rip, 0x0001);
        CHECK(r.run.instructions == 4);
    }
    SECTION("a relative target wraps") {
        // E9 F000 at 0x1000: 0x1003 + 0xF000 = 0x10003 -> 0x0003.
        auto r = run_ok(16, "db 0xE9\ndw 0xF000", {.bytes = {{0x0000, {0x90, 0x90, 0x90, 0xF4}}}});
        CHECK_HEX(r.run.rip, 0x0004);
        CHECK(r.run.instructions == 2);
    }
    SECTION("call across the wrap pushes the wrapped return address") {
        // At 0xFFFD: E8 rel16 (3 bytes) -> next IP 0x0000, target 0x0000 + 0x0010.
        auto r = run_ok(16, "jmp near 0xFFFD",
                        {.bytes = {{0xFFFD, {0xE8, 0x10, 0x00}}, {0x0010, {0xF4}}}});
        CHECK_HEX(r.run.rip, 0x0011);
        CHECK_HEX(mem16(r, 0xFFF0 - 2), 0x0000);
    }
}

TEST_CASE("66-prefixed near branches in 64-bit mode keep rel32 and 64-bit operand size",
          "[control]") {
    // Intel processors ignore 66 on near JMP/CALL/Jcc in 64-bit mode (SDM Vol. 2, JMP:
    // "In 64-bit mode ... the operand size is fixed at 64 bits"; CALL likewise); AMD
    // processors use a 16-bit operand size and a rel16 displacement instead.
    const std::string pad =
        "times 16 db 0x0F, 0x0B\n";  // UD2s where an AMD-style decode would land
    SECTION("66 E9 rel32") {
        auto r = run_ok(64, "db 0x66, 0xE9\ndd 0x20\n" + pad + "hlt");
        CHECK_HEX(r.run.rip, kCodeBase + 6 + 0x20 + 1);
    }
    SECTION("66 E8 rel32 pushes 8 bytes") {
        auto r = run_ok(64, "db 0x66, 0xE8\ndd 0x20\n" + pad + "mov rax, [rsp]\nhlt");
        CHECK_HEX(r.reg(RAX), kCodeBase + 6);
        CHECK_HEX(r.reg(RSP), top - 8);
    }
    SECTION("66 0F 84 rel32 (jz), taken and not taken") {
        auto r = run_ok(64, "db 0x66, 0x0F, 0x84\ndd 0x20\n" + pad + "hlt", {.flags = ZF});
        CHECK_HEX(r.run.rip, kCodeBase + 7 + 0x20 + 1);
        auto s = run_ok(64, "db 0x66, 0x0F, 0x84\ndd 0x20\nhlt");
        CHECK_HEX(s.run.rip, kCodeBase + 7 + 1);
    }
}
