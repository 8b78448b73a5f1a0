// MUL, IMUL (one, two and three operands), DIV, IDIV (SDM Vol. 2 instruction pages).
//
// MUL/IMUL define only CF and OF (set when the upper half is significant); SF ZF AF
// PF are undefined. DIV/IDIV leave all six flags undefined and raise #DE for a zero
// divisor or a quotient that does not fit the destination.
#include "tests/unit_common.h"

using namespace pmusim;
using namespace pmusim::unit;

namespace {

constexpr u64 kPatA = 0xA5A5A5A5A5A5A5A5ull, kPatB = 0x5A5A5A5A5A5A5A5Aull,
              kPatD = 0xC3C3C3C3C3C3C3C3ull;

struct WideCase {
    const char* op;  // mul imul div idiv
    unsigned size;
    u64 acc;  // AX for byte forms (the whole dividend for DIV/IDIV r/m8), else rAX
    u64 dx;   // rDX (ignored for byte forms)
    u64 src;
    u64 lo, hi;  // MUL/IMUL: product halves; DIV/IDIV: quotient, remainder
    bool cf_of;  // MUL/IMUL only
};

/// Runs "op bl/bx/ebx/rbx" and checks rAX/rDX (AL/AH for byte forms) and CF/OF.
void check_wide(int bits, const WideCase& c) {
    const std::string op = c.op;
    const std::string src = op + " " + reg_name(RBX, c.size);
    INFO(bits << "-bit: " << src << std::hex << " acc=" << c.acc << " dx=" << c.dx
              << " src=" << c.src);
    const u64 m = size_mask(c.size);
    const u64 am = c.size == 1 ? 0xFFFF : m;
    const u64 rax = (kPatA & ~am) | c.acc, rdx = c.size == 1 ? kPatD : (kPatD & ~m) | c.dx;
    const u64 rbx = (kPatB & ~m) | c.src;
    auto r = run_ok(bits, src + "\nhlt", {.regs = {{RAX, rax}, {RDX, rdx}, {RBX, rbx}}});
    u64 want_ax, want_dx;
    if (c.size == 1) {  // AX = AH:AL (SDM: MUL r/m8 -> AX; DIV r/m8 -> AL quotient, AH remainder)
        want_ax = (rax & ~0xFFFFull) | (c.hi << 8) | c.lo;
        want_dx = rdx;
    } else {
        want_ax = merged(rax, c.lo, c.size);
        want_dx = merged(rdx, c.hi, c.size);
    }
    const u64 view = bits == 64 ? ~0ull : 0xFFFFFFFFull;
    CHECK_HEX(r.reg(RAX) & view, want_ax & view);
    CHECK_HEX(r.reg(RDX) & view, want_dx & view);
    CHECK_HEX(r.reg(RBX) & view, rbx & view);
    if (op == "mul" || op == "imul") CHECK_FLAGS(r, CF | OF, c.cf_of ? CF | OF : 0);
}

const WideCase kMul[] = {
    // MUL: unsigned; CF = OF = (upper half != 0)
    {"mul", 1, 0x80, 0, 0x02, 0x00, 0x01, true},
    {"mul", 1, 0x0F, 0, 0x0F, 0xE1, 0x00, false},
    {"mul", 1, 0xFF, 0, 0xFF, 0x01, 0xFE, true},
    {"mul", 2, 0xFFFF, 0x1234, 0xFFFF, 0x0001, 0xFFFE, true},
    {"mul", 2, 0x0100, 0x1234, 0x00FF, 0xFF00, 0x0000, false},
    {"mul", 4, 0x80000000, 0x1234, 0x2, 0x0, 0x1, true},
    {"mul", 4, 0x3, 0x1234, 0x5, 0xF, 0x0, false},  // EDX is still written (with 0)
    {"mul", 8, ~0ull, 0x1234, ~0ull, 0x1, 0xFFFFFFFFFFFFFFFE, true},
    {"mul", 8, 0x100000000, 0, 0x100000000, 0x0, 0x1, true},
    {"mul", 8, 0x123456789, 0, 0x10, 0x1234567890, 0x0, false},
    // IMUL r/m: signed; CF = OF = (the product is not the sign extension of its low half)
    {"imul", 1, 0xFF, 0, 0x02, 0xFE, 0xFF, false},         // -1 * 2 = -2
    {"imul", 1, 0x40, 0, 0x02, 0x80, 0x00, true},          // 64 * 2 = 128 does not fit in int8
    {"imul", 1, 0x80, 0, 0x80, 0x00, 0x40, true},          // -128 * -128 = 0x4000
    {"imul", 2, 0x8000, 0, 0xFFFF, 0x8000, 0x0000, true},  // -32768 * -1 = 32768
    {"imul", 2, 0xFFFF, 0, 0xFFFF, 0x0001, 0x0000, false},
    {"imul", 4, 0xFFFFFFFE, 0, 0x3, 0xFFFFFFFA, 0xFFFFFFFF, false},  // -2 * 3 = -6
    {"imul", 4, 0x10000, 0, 0x10000, 0x0, 0x1, true},
    {"imul", 8, 0x4000000000000000, 0, 0x4, 0x0, 0x1, true},
    {"imul", 8, ~0ull - 2, 0, ~0ull - 4, 0xF, 0x0, false},                     // -3 * -5 = 15
    {"imul", 8, 0x8000000000000000, 0, ~0ull, 0x8000000000000000, 0x0, true},  // -2^63 * -1 = 2^63
};

const WideCase kDiv[] = {
    // DIV: unsigned; byte form divides AX, others rDX:rAX
    {"div", 1, 0x0100, 0, 0x03, 0x55, 0x01, false},             // 256 / 3 = 85 r 1
    {"div", 1, 0xFEFF, 0, 0xFF, 0xFF, 0xFE, false},             // 65279 / 255 = 255 r 254
    {"div", 2, 0x0000, 0x0001, 0x0007, 0x2492, 0x0002, false},  // 65536 / 7 = 9362 r 2
    {"div", 4, 0x0, 0x1, 0x10, 0x10000000, 0x0, false},
    {"div", 4, 0xFFFFFFFF, 0x0, 0xFFFFFFFF, 0x1, 0x0, false},
    {"div", 8, 0x5, 0x1, 0x2, 0x8000000000000002, 0x1, false},  // (2^64 + 5) / 2
    {"div", 8, ~0ull, 0xFFFFFFFFFFFFFFFE, ~0ull, ~0ull, 0xFFFFFFFFFFFFFFFE, false},
    // IDIV: signed; quotient truncated toward zero, remainder has the dividend's sign
    {"idiv", 1, 0xFFF9, 0, 0x02, 0xFD, 0xFF, false},             // -7 / 2 = -3 r -1
    {"idiv", 1, 0xFF80, 0, 0x01, 0x80, 0x00, false},             // -128 / 1 = -128 fits
    {"idiv", 1, 0x007F, 0, 0xFF, 0x81, 0x00, false},             // 127 / -1 = -127
    {"idiv", 2, 0x0007, 0x0000, 0xFFFE, 0xFFFD, 0x0001, false},  // 7 / -2 = -3 r 1
    {"idiv", 4, 0xFFFFFF9C, 0xFFFFFFFF, 0x7, 0xFFFFFFF2, 0xFFFFFFFE, false},  // -100 / 7 = -14 r -2
    {"idiv", 8, 0x0, 0xFFFFFFFFFFFFFFFF, 0x100000000, 0xFFFFFFFF00000000, 0x0,
     false},                                                                      // -2^64 / 2^32
    {"idiv", 8, 0x8000000000000000, ~0ull, 0x1, 0x8000000000000000, 0x0, false},  // -2^63 / 1
};

}  // namespace

TEST_CASE("MUL and one-operand IMUL", "[muldiv]") {
    for (const WideCase& c : kMul) {
        check_wide(64, c);
        if (c.size < 8) {
            check_wide(32, c);
            check_wide(16, c);
        }
    }
}

TEST_CASE("DIV and IDIV", "[muldiv]") {
    for (const WideCase& c : kDiv) {
        check_wide(64, c);
        if (c.size < 8) {
            check_wide(32, c);
            check_wide(16, c);
        }
    }
}

TEST_CASE("MUL/IMUL/DIV with memory operands", "[muldiv]") {
    constexpr u64 d = kDataBase;
    SECTION("mul qword [mem]") {
        auto r = run_ok(64, "mul qword [rbx]\nhlt",
                        {.regs = {{RAX, 0x100000000}, {RBX, d}}, .mem = {{d, 0x100000000}}});
        CHECK_HEX(r.reg(RAX), 0);
        CHECK_HEX(r.reg(RDX), 1);
        CHECK_FLAGS(r, CF | OF, CF | OF);
    }
    SECTION("imul byte [mem]") {
        auto r = run_ok(64, "imul byte [rbx]\nhlt",
                        {.regs = {{RAX, 0x1234567890ABCDFD}, {RBX, d}}, .mem = {{d, 0x03, 1}}});
        CHECK_HEX(r.reg(RAX), 0x1234567890ABFFF7);  // -3 * 3 = -9
        CHECK_FLAGS(r, CF | OF, 0);
    }
    SECTION("div word [mem]") {
        auto r =
            run_ok(64, "div word [rbx+2]\nhlt",
                   {.regs = {{RAX, 0xFFFF}, {RDX, 0x00FF}, {RBX, d}}, .mem = {{d, 0x01000000, 4}}});
        // 0x00FFFFFF / 0x0100 = 0xFFFF r 0xFF
        CHECK_HEX(r.reg(RAX), 0xFFFF);
        CHECK_HEX(r.reg(RDX), 0x00FF);
    }
    SECTION("idiv dword [mem] in 32-bit code") {
        auto r = run_ok(32, "idiv dword [ebx]\nhlt",
                        {.regs = {{RAX, 100}, {RDX, 0}, {RBX, d}}, .mem = {{d, 0xFFFFFFF9, 4}}});
        CHECK_HEX(r.reg(RAX) & 0xFFFFFFFF, 0xFFFFFFF2);  // 100 / -7 = -14 r 2
        CHECK_HEX(r.reg(RDX) & 0xFFFFFFFF, 0x2);
    }
}

TEST_CASE("MUL/IMUL/DIV/IDIV with AH, BH, CH, DH operands", "[muldiv]") {
    auto r = run_ok(64, "mul ah\nhlt", {.regs = {{RAX, 0x1234567800000305}}});
    CHECK_HEX(r.reg(RAX), 0x123456780000000F);  // AL 5 * AH 3
    auto s = run_ok(64, "div ch\nhlt", {.regs = {{RAX, 0x00FF}, {RCX, 0x1000}}});
    CHECK_HEX(s.reg(RAX), 0x0F0F);  // 255 / 16 = 15 r 15
    auto t = run_ok(64, "idiv bh\nhlt", {.regs = {{RAX, 0xFF00}, {RBX, 0x0300}}});
    CHECK_HEX(t.reg(RAX), 0xFFAB);  // -256 / 3 = -85 (0xAB) r -1 (0xFF)
    auto u = run_ok(32, "imul dh\nhlt", {.regs = {{RAX, 0x80}, {RDX, 0xFF00}}});
    CHECK_HEX(u.reg(RAX) & 0xFFFF, 0x0080);  // -128 * -1 = 128 does not fit in AL
    CHECK_FLAGS(u, CF | OF, CF | OF);
}

TEST_CASE("IMUL with two and three operands", "[muldiv]") {
    // SDM IMUL: the product is truncated to the destination; CF = OF = it did not fit.
    constexpr u64 d = kDataBase;
    SECTION("imul r32, r32 overflows and zero-extends") {
        auto r =
            run_ok(64, "imul eax, ecx\nhlt", {.regs = {{RAX, 0xFFFFFFFF00010000}, {RCX, 0x10000}}});
        CHECK_HEX(r.reg(RAX), 0);
        CHECK_HEX(r.reg(RCX), 0x10000);
        CHECK_FLAGS(r, CF | OF, CF | OF);
    }
    SECTION("imul r16, r16 keeps bits 63:16") {
        auto r =
            run_ok(64, "imul ax, cx\nhlt", {.regs = {{RAX, 0x1111111111110100}, {RCX, 0x0100}}});
        CHECK_HEX(r.reg(RAX), 0x1111111111110000);
        CHECK_FLAGS(r, CF | OF, CF | OF);
    }
    SECTION("imul r16, r16 without overflow") {
        auto r = run_ok(64, "imul dx, cx\nhlt", {.regs = {{RDX, 0xFFFD}, {RCX, 0x0100}}});
        CHECK_HEX(r.reg(RDX), 0xFD00);  // -3 * 256 = -768
        CHECK_FLAGS(r, CF | OF, 0);
    }
    SECTION("imul r64, m64") {
        auto r = run_ok(64, "imul rax, [rbx]\nhlt",
                        {.regs = {{RAX, ~0ull - 3}, {RBX, d}}, .mem = {{d, 0x100}}});
        CHECK_HEX(r.reg(RAX), 0xFFFFFFFFFFFFFC00);  // -4 * 256
        CHECK_FLAGS(r, CF | OF, 0);
    }
    SECTION("imul r64, r64 overflows") {
        auto r = run_ok(64, "imul rax, rcx\nhlt", {.regs = {{RAX, 0x7FFFFFFFFFFFFFFF}, {RCX, 2}}});
        CHECK_HEX(r.reg(RAX), 0xFFFFFFFFFFFFFFFE);
        CHECK_FLAGS(r, CF | OF, CF | OF);
    }
    SECTION("imul r32, r32, imm8: -2 * 0x40000000 = INT32_MIN fits") {
        auto r = run_ok(64, "imul eax, ecx, -2\nhlt", {.regs = {{RAX, ~0ull}, {RCX, 0x40000000}}});
        CHECK_HEX(r.reg(RAX), 0x80000000);
        CHECK_HEX(r.reg(RCX), 0x40000000);
        CHECK_FLAGS(r, CF | OF, 0);
    }
    SECTION("imul r32, r32, imm8: 2 * 0x40000000 does not fit") {
        auto r = run_ok(64, "imul eax, ecx, 2\nhlt", {.regs = {{RAX, ~0ull}, {RCX, 0x40000000}}});
        CHECK_HEX(r.reg(RAX), 0x80000000);
        CHECK_FLAGS(r, CF | OF, CF | OF);
    }
    SECTION("imul r16, r16, imm8 is sign-extended") {
        auto r = run_ok(64, "imul ax, cx, -1\nhlt",
                        {.regs = {{RAX, 0x5555555555555555}, {RCX, 0x0001}}});
        CHECK_HEX(r.reg(RAX), 0x555555555555FFFF);
        CHECK_FLAGS(r, CF | OF, 0);
    }
    SECTION("imul r16, r16, imm16") {
        auto r =
            run_ok(64, "imul ax, cx, 1000\nhlt", {.regs = {{RAX, 0xAAAAAAAAAAAAAAAA}, {RCX, 50}}});
        CHECK_HEX(r.reg(RAX), 0xAAAAAAAAAAAAC350);  // 50000 > 32767
        CHECK_FLAGS(r, CF | OF, CF | OF);
    }
    SECTION("imul r64, m64, imm32") {
        auto r = run_ok(64, "imul rax, [rbx], 0x12345678\nhlt",
                        {.regs = {{RBX, d}}, .mem = {{d, 0x10}}});
        CHECK_HEX(r.reg(RAX), 0x123456780);
        CHECK_FLAGS(r, CF | OF, 0);
    }
    SECTION("imul r64, r64, -1 of INT64_MIN overflows") {
        auto r = run_ok(64, "imul rdx, rcx, -1\nhlt", {.regs = {{RCX, 0x8000000000000000}}});
        CHECK_HEX(r.reg(RDX), 0x8000000000000000);
        CHECK_FLAGS(r, CF | OF, CF | OF);
    }
    SECTION("imul r32, r32, imm32 in 32-bit code") {
        auto r = run_ok(32, "imul ebx, ecx, 0x10000\nhlt", {.regs = {{RCX, 0xFFFF}}});
        CHECK_HEX(r.reg(RBX) & 0xFFFFFFFF, 0xFFFF0000);  // 0xFFFF0000 > INT32_MAX
        CHECK_FLAGS(r, CF | OF, CF | OF);
    }
    SECTION("imul r16, r16 in 16-bit code") {
        auto r = run_ok(16, "imul bx, cx\nhlt", {.regs = {{RBX, 0x00FF}, {RCX, 0x0081}}});
        CHECK_HEX(r.reg(RBX) & 0xFFFF, 0x807F);  // 255 * 129 = 32895 > 32767
        CHECK_FLAGS(r, CF | OF, CF | OF);
    }
}

TEST_CASE("DIV/IDIV raise #DE on a zero divisor or an oversized quotient", "[muldiv]") {
    // SDM DIV/IDIV: #DE "if the source operand (divisor) is 0" and "if the quotient is
    // too large for the designated register". RIP stays at the instruction and no
    // register changes.
    struct Fault {
        int bits;
        const char* insn;
        u64 rax, rdx, rbx;
    };
    const Fault faults[] = {
        {64, "div rbx", 5, 0, 0},
        {64, "div bl", 0x0100, 0, 0x00},
        {64, "div bl", 0x0100, 0, 0x01},    // 256 / 1 needs 9 bits
        {64, "div cx", 0x0000, 0x0001, 0},  // divisor rcx = 0 (rbx unused)
        {64, "div ebx", 0x0, 0x1, 0x1},
        {64, "div rbx", 0x0, 0x5, 0x5},                      // RDX >= divisor
        {64, "idiv rbx", 0x8000000000000000, ~0ull, ~0ull},  // -2^63 / -1 = 2^63
        {64, "idiv bl", 0xFF80, 0, 0xFF},                    // -128 / -1 = 128
        {64, "idiv cx", 0x8000, 0x0000, 0},                  // zero divisor
        {64, "idiv bx", 0x8000, 0x0000, 0x0001},             // 32768 / 1 > 32767
        {64, "idiv ebx", 0x0, 0xFFFFFFFF, 0x1},              // -2^32 / 1 does not fit
        {32, "div ebx", 0x1, 0x0, 0x0},
        {32, "idiv ebx", 0x80000000, 0xFFFFFFFF, 0xFFFFFFFF},
        {16, "div bx", 0x1, 0x0, 0x0},
        {16, "idiv bl", 0x7FFF, 0, 0x02},  // 32767 / 2 = 16383 > 127
    };
    for (const Fault& f : faults) {
        INFO(f.bits << "-bit: " << f.insn);
        // A NOP first, so the fault is not at the first byte of the snippet.
        auto r = run_fault(f.bits, std::string("nop\n") + f.insn + "\nhlt", vec::DE, kCodeBase + 1,
                           {.regs = {{RAX, f.rax}, {RDX, f.rdx}, {RBX, f.rbx}, {RCX, 0}}});
        CHECK(r.run.instructions == 1);
        CHECK_HEX(r.reg(RAX), f.rax);
        CHECK_HEX(r.reg(RDX), f.rdx);
    }
    SECTION("memory divisor of zero") {
        auto r = run_fault(64, "div qword [rbx]\nhlt", vec::DE, kCodeBase,
                           {.regs = {{RAX, 7}, {RBX, kDataBase}}});
        CHECK_HEX(r.reg(RAX), 7);
    }
}

TEST_CASE("MUL/IMUL/DIV documented choices for undefined results", "[muldiv][documented-choice]") {
    // docs/semantics/integer.md (observed on an Intel Xeon): after MUL/IMUL, ZF = 0,
    // SF = MSB of the low half, PF = parity of the low byte, AF = 0; DIV/IDIV leave
    // all six flags unchanged.
    SECTION("MUL: ZF cleared even for a zero low half, SF PF from the low half, AF cleared") {
        auto r = run_ok(64, "mul cl\nhlt", {.regs = {{RAX, 0x80}, {RCX, 0x02}}, .flags = AF | SF | ZF});
        CHECK_HEX(r.reg(RAX), 0x0100);
        CHECK_FLAGS(r, kAll6, CF | OF | PF);  // low half 0x00: PF = 1, SF = 0, ZF = 0
    }
    SECTION("IMUL r64, r64, imm: SF from the truncated result") {
        auto r = run_ok(64, "imul rax, rcx, 3\nhlt",
                        {.regs = {{RCX, 0x5555555555555556}}, .flags = AF | ZF});
        CHECK_HEX(r.reg(RAX), 0x0000000000000002);
        CHECK_FLAGS(r, kAll6, CF | OF);  // 0x02: SF=0 ZF=0 PF=0
    }
    SECTION("IMUL r/m32: SF from the low half") {
        auto r = run_ok(64, "imul ecx\nhlt", {.regs = {{RAX, 0xFFFFFFFF}, {RCX, 0x3}}});
        CHECK_HEX(r.reg(RAX), 0xFFFFFFFD);
        CHECK_HEX(r.reg(RDX), 0xFFFFFFFF);
        CHECK_FLAGS(r, kAll6, SF);  // 0xFD: seven bits set, PF=0
    }
    SECTION("DIV and IDIV leave the flags unchanged") {
        for (u64 f : {u64(0), kAll6, CF | ZF | PF}) {
            auto r =
                run_ok(64, "div ecx\nidiv ecx\nhlt", {.regs = {{RAX, 100}, {RCX, 7}}, .flags = f});
            CHECK_FLAGS(r, kAll6, f);
        }
    }
}
