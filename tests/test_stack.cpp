// PUSH POP PUSHA POPA PUSHF POPF ENTER LEAVE (SDM Vol. 2 instruction pages; Vol. 1, 6.2).
// In 64-bit mode pushes and pops are 64-bit unless 66 selects 16 bits; elsewhere they
// follow the operand size. The stack pointer width follows the stack segment
// (SP with a 16-bit stack, ESP with a 32-bit one, RSP in 64-bit mode).
#include "tests/unit_common.h"

using namespace pmusim;
using namespace pmusim::unit;

namespace {
constexpr u64 d = kDataBase;
constexpr u64 top = kStackTop;
}  // namespace

TEST_CASE("PUSH in 64-bit mode: every operand form and size", "[stack]") {
    auto r = run_ok(64, R"(
        push rax
        push byte -1
        push 0x12345678
        push -0x80000000
        push word 0x1234
        push word -2
        push ax
        push qword [rbx]
        push word [rbx+8]
        push r9
        hlt)",
                    {.regs = {{RAX, 0x1122334455667788}, {RBX, d}, {R9, 0x0F0F}},
                     .mem = {{d, 0xAAAABBBBCCCCDDDD}, {d + 8, 0xEEFF}}});
    CHECK_HEX(mem64(r, top - 8), 0x1122334455667788);
    CHECK_HEX(mem64(r, top - 16), ~0ull);  // imm8 sign-extended to 64 bits
    CHECK_HEX(mem64(r, top - 24), 0x12345678);
    CHECK_HEX(mem64(r, top - 32), 0xFFFFFFFF80000000);  // imm32 sign-extended
    CHECK_HEX(mem16(r, top - 34), 0x1234);              // 66 68 iw: 2 bytes
    CHECK_HEX(mem16(r, top - 36), 0xFFFE);              // 66 6A ib: 2 bytes
    CHECK_HEX(mem16(r, top - 38), 0x7788);              // 66 50
    CHECK_HEX(mem64(r, top - 46), 0xAAAABBBBCCCCDDDD);
    CHECK_HEX(mem16(r, top - 48), 0xEEFF);
    CHECK_HEX(mem64(r, top - 56), 0x0F0F);
    CHECK_HEX(r.reg(RSP), top - 56);
}

TEST_CASE("POP in 64-bit mode", "[stack]") {
    const u64 sp = 0x7FF00;
    auto r = run_ok(64, R"(
        pop rcx
        pop dx
        pop qword [rbx]
        pop word [rbx+8]
        pop r10
        hlt)",
                    {.regs = {{RSP, sp}, {RBX, d}, {RDX, 0x5555555555555555}},
                     .mem = {{sp, 0x1111111111111111},
                             {sp + 8, 0x2222, 2},
                             {sp + 10, 0x3333333333333333},
                             {sp + 18, 0x4444, 2},
                             {sp + 20, 0x6666666666666666},
                             {d, 0},
                             {d + 8, 0xFFFFFFFF}}});
    CHECK_HEX(r.reg(RCX), 0x1111111111111111);
    CHECK_HEX(r.reg(RDX), 0x5555555555552222);
    CHECK_HEX(mem64(r, d), 0x3333333333333333);
    CHECK_HEX(mem64(r, d + 8), 0xFFFF4444);
    CHECK_HEX(r.reg(R10), 0x6666666666666666);
    CHECK_HEX(r.reg(RSP), sp + 28);
}

TEST_CASE("PUSH and POP with RSP as operand", "[stack]") {
    SECTION("push rsp pushes the value before the push") {
        auto r = run_ok(64, "push rsp\nhlt");
        CHECK_HEX(mem64(r, top - 8), top);
        CHECK_HEX(r.reg(RSP), top - 8);
    }
    SECTION("push qword [rsp] reads before RSP moves") {
        auto r = run_ok(64, "push qword [rsp]\nhlt",
                        {.regs = {{RSP, 0x7FF00}}, .mem = {{0x7FF00, 0xAB}}});
        CHECK_HEX(mem64(r, 0x7FEF8), 0xAB);
    }
    SECTION("pop rsp loads the popped value (the increment is lost)") {
        // SDM POP: "POP ESP increments the stack pointer before data at the old top of
        // stack is written into the destination."
        auto r =
            run_ok(64, "pop rsp\nhlt", {.regs = {{RSP, 0x7FF00}}, .mem = {{0x7FF00, 0x12340}}});
        CHECK_HEX(r.reg(RSP), 0x12340);
    }
    SECTION("pop qword [rsp] computes the address after the increment") {
        // SDM POP: "If the ESP register is used as a base register for addressing a
        // destination operand in memory, the POP instruction computes the effective address
        // of the operand after it increments the ESP register."
        auto r = run_ok(64, "pop qword [rsp]\nhlt",
                        {.regs = {{RSP, 0x7FF00}}, .mem = {{0x7FF00, 0xAAAA}, {0x7FF08, 0xBBBB}}});
        CHECK_HEX(r.reg(RSP), 0x7FF08);
        CHECK_HEX(mem64(r, 0x7FF08), 0xAAAA);
        CHECK_HEX(mem64(r, 0x7FF00), 0xAAAA);
    }
    SECTION("pop qword [rsp+8]") {
        auto r = run_ok(
            64, "pop qword [rsp+8]\nhlt",
            {.regs = {{RSP, 0x7FF00}}, .mem = {{0x7FF00, 0xCCCC}, {0x7FF08, 0}, {0x7FF10, 0}}});
        CHECK_HEX(mem64(r, 0x7FF10), 0xCCCC);
        CHECK_HEX(mem64(r, 0x7FF08), 0);
    }
    SECTION("32-bit code: push esp, pop esp") {
        auto r = run_ok(32, "push esp\npop eax\npush dword 0x7F000\npop esp\nhlt");
        CHECK_HEX(r.reg(RAX) & 0xFFFFFFFF, top);
        CHECK_HEX(r.reg(RSP) & 0xFFFFFFFF, 0x7F000);
    }
}

TEST_CASE("PUSH/POP in 32-bit code", "[stack]") {
    auto r = run_ok(32, R"(
        push eax
        push byte -128
        push word 0x1234
        push bx
        push dword [esi]
        pop ecx
        pop dx
        pop word [esi+4]
        hlt)",
                    {.regs = {{RAX, 0x11223344}, {RBX, 0xAAAABBBB}, {RDX, 0x99999999}, {RSI, d}},
                     .mem = {{d, 0x0000000055667788}}});
    CHECK_HEX(mem32(r, top - 4), 0x11223344);
    CHECK_HEX(mem32(r, top - 8), 0xFFFFFF80);  // imm8 sign-extended to 32 bits
    CHECK_HEX(mem16(r, top - 10), 0x1234);
    CHECK_HEX(mem16(r, top - 12), 0xBBBB);
    CHECK_HEX(mem32(r, top - 16), 0x55667788);
    CHECK_HEX(r.reg(RCX) & 0xFFFFFFFF, 0x55667788);
    CHECK_HEX(r.reg(RDX) & 0xFFFFFFFF, 0x9999BBBB);
    CHECK_HEX(mem64(r, d), 0x0000123455667788);
    CHECK_HEX(r.reg(RSP) & 0xFFFFFFFF, top - 8);
}

TEST_CASE("PUSH/POP in 16-bit code: SP wraps, ESP bits 31:16 stay", "[stack]") {
    auto r = run_ok(16, R"(
        push ax
        push byte -2
        push eax
        pop ecx
        pop dx
        pop bx
        pop si
        hlt)",
                    {.regs = {{RSP, 0x00050002},
                              {RAX, 0x12345678},
                              {RDX, 0xAAAAAAAA},
                              {RBX, 0xBBBBBBBB},
                              {RSI, 0xCCCC0000}},
                     .mem = {{0x0002, 0x4444, 2}}});
    // push ax: SP 2 -> 0; push -2: SP -> 0xFFFE; push eax: SP -> 0xFFFA.
    CHECK_HEX(mem16(r, 0x0000), 0x5678);
    CHECK_HEX(mem16(r, 0xFFFE), 0xFFFE);
    CHECK_HEX(mem32(r, 0xFFFA), 0x12345678);
    CHECK_HEX(r.reg(RCX) & 0xFFFFFFFF, 0x12345678);
    CHECK_HEX(r.reg(RDX) & 0xFFFFFFFF, 0xAAAAFFFE);
    CHECK_HEX(r.reg(RBX) & 0xFFFFFFFF, 0xBBBB5678);
    CHECK_HEX(r.reg(RSI) & 0xFFFFFFFF, 0xCCCC4444);  // popped from SP = 2 after wrapping
    CHECK_HEX(r.reg(RSP) & 0xFFFFFFFF, 0x00050004);
}

TEST_CASE("PUSHA/PUSHAD and POPA/POPAD in 32-bit code", "[stack]") {
    SECTION("pushad order and popad skipping ESP") {
        auto r = run_ok(
            32, R"(
            pushad
            mov dword [esp+12], 0x999
            mov eax, 0
            mov ecx, 0
            mov edx, 0
            mov ebx, 0
            mov ebp, 0
            mov esi, 0
            mov edi, 0
            popad
            hlt)",
            {.regs = {{RAX, 1}, {RCX, 2}, {RDX, 3}, {RBX, 4}, {RBP, 6}, {RSI, 7}, {RDI, 8}}});
        // SDM PUSHA: EAX, ECX, EDX, EBX, original ESP, EBP, ESI, EDI.
        const u64 expect[8] = {1, 2, 3, 4, top, 6, 7, 8};
        for (int k = 0; k < 8; ++k) {
            INFO("slot " << k);
            CHECK_HEX(mem32(r, top - 4 * (k + 1)), k == 4 ? 0x999 : expect[k]);
        }
        const Gpr regs[8] = {RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI};
        for (int k = 0; k < 8; ++k) {
            if (k == 4) continue;
            CHECK_HEX(r.reg(regs[k]) & 0xFFFFFFFF, expect[k]);
        }
        CHECK_HEX(r.reg(RSP) & 0xFFFFFFFF, top);  // the stored ESP image is discarded
    }
    SECTION("pushaw/popaw (66 60 / 66 61) move 16-bit registers") {
        auto r = run_ok(32, "pushaw\nmov eax, 0xFFFFFFFF\npopaw\nhlt",
                        {.regs = {{RAX, 0x11111111}, {RCX, 0x22222222}, {RDI, 0x88888888}}});
        CHECK_HEX(mem16(r, top - 2), 0x1111);
        CHECK_HEX(mem16(r, top - 4), 0x2222);
        CHECK_HEX(mem16(r, top - 10), top & 0xFFFF);  // SP image
        CHECK_HEX(mem16(r, top - 16), 0x8888);
        CHECK_HEX(r.reg(RAX) & 0xFFFFFFFF, 0xFFFF1111);
        CHECK_HEX(r.reg(RSP) & 0xFFFFFFFF, top);
    }
    SECTION("16-bit code: pusha (60) pushes 16-bit registers, pushad (66 60) 32-bit ones") {
        const Init in = {.regs = {{RAX, 0x11111111}, {RBX, 0x44444444}, {RDI, 0x88888888}}};
        auto r = run_ok(16, "pusha\nhlt", in);
        CHECK_HEX(mem16(r, 0xFFF0 - 2), 0x1111);   // AX
        CHECK_HEX(mem16(r, 0xFFF0 - 8), 0x4444);   // BX
        CHECK_HEX(mem16(r, 0xFFF0 - 10), 0xFFF0);  // original SP
        CHECK_HEX(mem16(r, 0xFFF0 - 16), 0x8888);  // DI
        CHECK_HEX(r.reg(RSP) & 0xFFFF, 0xFFE0);
        auto s = run_ok(16, "pushad\nmov eax, 0\npopad\nhlt", in);
        CHECK_HEX(mem32(s, 0xFFF0 - 4), 0x11111111);
        CHECK_HEX(mem32(s, 0xFFF0 - 16), 0x44444444);
        CHECK_HEX(mem32(s, 0xFFF0 - 32), 0x88888888);
        CHECK_HEX(s.reg(RAX) & 0xFFFFFFFF, 0x11111111);
        CHECK_HEX(s.reg(RSP) & 0xFFFF, 0xFFF0);
    }
    SECTION("PUSHA is invalid in 64-bit mode") {
        run_fault(64, "db 0x60\nhlt", vec::UD, kCodeBase);
    }
}

TEST_CASE("PUSHF and POPF", "[stack]") {
    const u64 changeable_no_tf = CF | PF | AF | ZF | SF | kIF | DF | OF | kIOPL | kNT | kAC | kID;
    SECTION("pushfq stores RFLAGS with RF cleared") {
        const u64 f = CF | ZF | DF | OF | kAC | kRF | kID;
        auto r = run_ok(64, "pushfq\nhlt", {.flags = f});
        CHECK_HEX(mem64(r, top - 8), (f & ~kRF) | kFixed1);
        CHECK_HEX(r.reg(RSP), top - 8);
    }
    SECTION("pushfw (66 9C) in 64-bit mode stores 16 bits") {
        auto r = run_ok(64, "pushfw\nhlt", {.flags = SF | kAC, .mem = {{top - 8, ~0ull}}});
        CHECK_HEX(mem64(r, top - 8), 0x0082FFFFFFFFFFFF);
        CHECK_HEX(r.reg(RSP), top - 2);
    }
    SECTION("pushfd in 32-bit code, pushf in 16-bit code") {
        auto r = run_ok(32, "pushfd\nhlt", {.flags = PF | kRF | kIOPL});
        CHECK_HEX(mem32(r, top - 4), PF | kIOPL | kFixed1);
        auto s = run_ok(16, "pushf\nhlt", {.flags = OF | CF | kAC});
        CHECK_HEX(mem16(s, 0xFFF0 - 2), OF | CF | kFixed1);
    }
    SECTION("popfq at CPL 0: every non-reserved flag but TF/RF/VIF/VIP/VM") {
        // SDM POPF, Operation (CPL 0, not virtual-8086): all non-reserved flags except RF,
        // VIP, VIF and VM can be modified; VIP, VIF, VM and reserved bits are unaffected;
        // RF is cleared. (TF is left clear so that no single-step trap follows.)
        auto r = run_ok(64, "popfq\nhlt",
                        {.regs = {{RSP, 0x7FF00}}, .flags = kRF, .mem = {{0x7FF00, ~0ull & ~kTF}}});
        CHECK_FLAGS(r, ~0ull, changeable_no_tf | kFixed1);
        CHECK_HEX(rflags(r), 0x247ED7);
        CHECK_HEX(r.reg(RSP), 0x7FF08);
    }
    SECTION("popfq clears what it may") {
        auto r =
            run_ok(64, "popfq\nhlt",
                   {.regs = {{RSP, 0x7FF00}}, .flags = changeable_no_tf, .mem = {{0x7FF00, 0}}});
        CHECK_FLAGS(r, ~0ull, kFixed1);
    }
    SECTION("popfw (66 9D) changes bits 15:0 only") {
        auto r =
            run_ok(64, "popfw\nhlt",
                   {.regs = {{RSP, 0x7FF00}}, .flags = kAC | kID, .mem = {{0x7FF00, 0xFEFF, 2}}});
        CHECK_FLAGS(r, ~0ull, (changeable_no_tf & 0xFFFF) | kAC | kID | kFixed1);
        CHECK_HEX(r.reg(RSP), 0x7FF02);
    }
    SECTION("popfd in 32-bit code") {
        auto r = run_ok(
            32, "popfd\nhlt",
            {.regs = {{RSP, 0x7FF00}}, .flags = kRF | CF, .mem = {{0x7FF00, 0x00240A44, 4}}});
        CHECK_FLAGS(r, ~0ull, 0x00240A44 | kFixed1);  // ID AC OF IF ZF PF; CF and RF cleared
    }
    SECTION("popf in 16-bit code") {
        auto r = run_ok(16, "popf\nhlt",
                        {.regs = {{RSP, 0x8000}}, .flags = kAC, .mem = {{0x8000, 0x3001, 2}}});
        CHECK_FLAGS(r, ~0ull, CF | kIOPL | kAC | kFixed1);
    }
}

TEST_CASE("ENTER and LEAVE", "[stack]") {
    // SDM ENTER, Operation: push rBP; FrameTemp = rSP; for nesting level L > 0 copy L-1
    // frame pointers from [rBP - k*size] and push FrameTemp; rBP = FrameTemp;
    // rSP -= imm16. The nesting level is imm8 mod 32.
    SECTION("level 0") {
        auto r = run_ok(64, "enter 0x20, 0\nhlt", {.regs = {{RBP, 0x12345}}});
        CHECK_HEX(mem64(r, top - 8), 0x12345);
        CHECK_HEX(r.reg(RBP), top - 8);
        CHECK_HEX(r.reg(RSP), top - 8 - 0x20);
    }
    SECTION("level 1") {
        auto r = run_ok(64, "enter 0x10, 1\nhlt", {.regs = {{RBP, 0x12345}}});
        CHECK_HEX(mem64(r, top - 8), 0x12345);
        CHECK_HEX(mem64(r, top - 16), top - 8);
        CHECK_HEX(r.reg(RBP), top - 8);
        CHECK_HEX(r.reg(RSP), top - 16 - 0x10);
    }
    SECTION("level 3 copies two outer frame pointers") {
        auto r = run_ok(
            64, "enter 8, 3\nhlt",
            {.regs = {{RBP, 0x70000}}, .mem = {{0x70000 - 8, 0xAAAA}, {0x70000 - 16, 0xBBBB}}});
        CHECK_HEX(mem64(r, top - 8), 0x70000);
        CHECK_HEX(mem64(r, top - 16), 0xAAAA);
        CHECK_HEX(mem64(r, top - 24), 0xBBBB);
        CHECK_HEX(mem64(r, top - 32), top - 8);
        CHECK_HEX(r.reg(RBP), top - 8);
        CHECK_HEX(r.reg(RSP), top - 32 - 8);
    }
    SECTION("nesting level 33 is level 1") {
        auto r = run_ok(64, "enter 0, 33\nhlt", {.regs = {{RBP, 0x5}}});
        CHECK_HEX(mem64(r, top - 16), top - 8);
        CHECK_HEX(r.reg(RSP), top - 16);
    }
    SECTION("leave undoes enter") {
        auto r =
            run_ok(64, "enter 0x20, 0\nmov qword [rsp], 7\nleave\nhlt", {.regs = {{RBP, 0x12345}}});
        CHECK_HEX(r.reg(RBP), 0x12345);
        CHECK_HEX(r.reg(RSP), top);
    }
    SECTION("leave: rSP = rBP, then pop rBP") {
        auto r = run_ok(64, "leave\nhlt",
                        {.regs = {{RBP, 0x7F000}}, .mem = {{0x7F000, 0xFEDCBA9876543210}}});
        CHECK_HEX(r.reg(RBP), 0xFEDCBA9876543210);
        CHECK_HEX(r.reg(RSP), 0x7F008);
    }
    SECTION("32-bit code, level 2") {
        auto r = run_ok(32, "enter 0x100, 2\nhlt",
                        {.regs = {{RBP, 0x70000}}, .mem = {{0x70000 - 4, 0xCCCC, 4}}});
        CHECK_HEX(mem32(r, top - 4), 0x70000);
        CHECK_HEX(mem32(r, top - 8), 0xCCCC);
        CHECK_HEX(mem32(r, top - 12), top - 4);
        CHECK_HEX(r.reg(RBP) & 0xFFFFFFFF, top - 4);
        CHECK_HEX(r.reg(RSP) & 0xFFFFFFFF, top - 12 - 0x100);
    }
    SECTION("16-bit code") {
        auto r = run_ok(16, "enter 4, 0\nleave\nenter 4, 0\nhlt", {.regs = {{RBP, 0x1234}}});
        CHECK_HEX(mem16(r, 0xFFF0 - 2), 0x1234);
        CHECK_HEX(r.reg(RBP) & 0xFFFF, 0xFFEE);
        CHECK_HEX(r.reg(RSP) & 0xFFFF, 0xFFEA);
    }
}
