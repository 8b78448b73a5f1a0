// ADD ADC SUB SBB CMP AND OR XOR TEST NOT NEG INC DEC: results and the six
// arithmetic flags for every operand size, register/memory/immediate forms, and the
// register-write rules of 64-bit mode.
//
// Flag definitions (SDM Vol. 1, 3.4.3.1 and Appendix A; SDM Vol. 2 instruction pages):
// CF carry/borrow out of the MSB, OF signed overflow, SF = MSB of the result,
// ZF = result is 0, AF carry/borrow out of bit 3, PF = even parity of the low byte.
// AND/OR/XOR/TEST clear CF and OF and leave AF undefined; NOT changes no flags;
// INC/DEC leave CF unchanged; NEG sets CF unless the operand is 0.
#include "tests/unit_common.h"

using namespace pmusim;
using namespace pmusim::unit;

namespace {

constexpr u64 kPatA = 0xA5A5A5A5A5A5A5A5ull;  // fills the bits above the operand in RAX
constexpr u64 kPatB = 0x5A5A5A5A5A5A5A5Aull;  // and in RBX

struct AluCase {
    const char* op;
    unsigned size;  // operand size in bytes
    u64 a, b;       // destination (RAX-family) and source (RBX-family) inputs
    u64 flags_in;
    u64 result;  // ignored for CMP and TEST, which write nothing
    u64 flags_out;
};

bool is_unary(const std::string& op) {
    return op == "not" || op == "neg" || op == "inc" || op == "dec";
}
bool writes(const std::string& op) { return op != "cmp" && op != "test"; }
bool is_logic(const std::string& op) {
    return op == "and" || op == "or" || op == "xor" || op == "test";
}

/// Runs "op al/ax/eax/rax[, bl/bx/ebx/rbx]" in `bits`-bit code and checks RAX, RBX and flags.
void check_alu(int bits, const AluCase& c) {
    const std::string op = c.op;
    std::string src = op + " " + reg_name(RAX, c.size);
    if (!is_unary(op)) src += std::string(", ") + reg_name(RBX, c.size);
    INFO(bits << "-bit: " << src << "  a=" << std::hex << c.a << " b=" << c.b
              << " flags_in=" << c.flags_in);
    const u64 m = size_mask(c.size);
    const u64 a_in = (kPatA & ~m) | c.a, b_in = (kPatB & ~m) | c.b;
    auto r = run_ok(bits, src + "\nhlt", {.regs = {{RAX, a_in}, {RBX, b_in}}, .flags = c.flags_in});
    const u64 want = writes(op) ? merged(a_in, c.result, c.size) : a_in;
    // Outside 64-bit mode only the low 32 bits of a register are architectural.
    const u64 view = bits == 64 ? ~0ull : 0xFFFFFFFFull;
    CHECK_HEX(r.reg(RAX) & view, want & view);
    CHECK_HEX(r.reg(RBX) & view, b_in & view);
    // AF is undefined after AND/OR/XOR/TEST (SDM Vol. 2, AND/OR/XOR/TEST "Flags Affected").
    const u64 mask = is_logic(op) ? kAll6 & ~AF : kAll6;
    CHECK_FLAGS(r, mask, c.flags_out);
    CHECK_FLAGS(r, ~kAll6, kFixed1);  // nothing else changes
}

const AluCase kCases[] = {
    // ---- ADD
    {"add", 1, 0x7F, 0x01, 0, 0x80, OF | SF | AF},  // 127+1 overflows; 0xF+0x1 carries out of bit 3
    {"add", 1, 0xFF, 0x01, 0, 0x00, CF | ZF | AF | PF},
    {"add", 1, 0x80, 0x80, 0, 0x00, CF | OF | ZF | PF},
    {"add", 1, 0x12, 0x34, kAll6, 0x46, 0},  // CF in is ignored; 0x46 has 3 bits set: PF=0
    {"add", 2, 0x7FFF, 0x0001, 0, 0x8000, OF | SF | AF | PF},
    {"add", 2, 0xFFFF, 0x0001, 0, 0x0000, CF | ZF | AF | PF},
    {"add", 4, 0x7FFFFFFF, 0x1, 0, 0x80000000, OF | SF | AF | PF},
    {"add", 4, 0xFFFFFFF0, 0x10, 0, 0x0, CF | ZF | PF},  // no carry out of bit 3
    {"add", 8, 0x7FFFFFFFFFFFFFFF, 0x1, 0, 0x8000000000000000, OF | SF | AF | PF},
    {"add", 8, 0x8000000000000000, 0x8000000000000000, 0, 0x0, CF | OF | ZF | PF},
    {"add", 8, 0xFFFFFFFFFFFFFFFF, 0x2, 0, 0x1, CF | AF},
    // ---- ADC: DEST + SRC + CF
    {"adc", 1, 0x7F, 0x00, CF, 0x80, OF | SF | AF},
    {"adc", 1, 0xFF, 0xFF, CF, 0xFF, CF | SF | AF | PF},
    {"adc", 1, 0xFF, 0x00, 0, 0xFF, SF | PF},
    {"adc", 2, 0xFFFF, 0x0000, CF, 0x0000, CF | ZF | AF | PF},  // the carry comes from CF alone
    {"adc", 4, 0x7FFFFFFF, 0x7FFFFFFF, CF, 0xFFFFFFFF, OF | SF | AF | PF},
    {"adc", 8, ~0ull, ~0ull, CF, ~0ull, CF | SF | AF | PF},
    {"adc", 8, 0x7FFFFFFFFFFFFFFF, 0x0, CF, 0x8000000000000000, OF | SF | AF | PF},
    // ---- SUB
    {"sub", 1, 0x80, 0x01, 0, 0x7F, OF | AF},  // -128-1 overflows; borrow into bit 3
    {"sub", 1, 0x00, 0x01, 0, 0xFF, CF | SF | AF | PF},
    {"sub", 1, 0x05, 0x05, CF, 0x00, ZF | PF},
    {"sub", 2, 0x8000, 0x0001, 0, 0x7FFF, OF | AF | PF},
    {"sub", 4, 0x10, 0x20, 0, 0xFFFFFFF0, CF | SF | PF},
    {"sub", 8, 0x0, 0x8000000000000000, 0, 0x8000000000000000, CF | OF | SF | PF},
    // ---- SBB: DEST - (SRC + CF)
    {"sbb", 1, 0x00, 0x00, CF, 0xFF, CF | SF | AF | PF},
    {"sbb", 1, 0x80, 0x7F, CF, 0x00, OF | ZF | AF | PF},  // -128-127-1 = -256: overflow, no borrow
    {"sbb", 2, 0xFFFF, 0xFFFF, CF, 0xFFFF, CF | SF | AF | PF},
    {"sbb", 4, 0x12345678, 0x12345678, 0, 0x0, ZF | PF},
    {"sbb", 4, 0x80000000, 0x0, CF, 0x7FFFFFFF, OF | AF | PF},
    {"sbb", 8, 0x0, 0x0, CF, ~0ull, CF | SF | AF | PF},
    // ---- CMP: flags of SUB, no write
    {"cmp", 1, 0x01, 0x02, 0, 0, CF | SF | AF | PF},
    {"cmp", 2, 0x8000, 0x0001, 0, 0, OF | AF | PF},
    {"cmp", 4, 0x5, 0x5, CF | SF, 0, ZF | PF},
    {"cmp", 8, 0x7FFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0, 0, CF | OF | SF | PF},
    // ---- AND OR XOR TEST: CF = OF = 0, SF ZF PF from the result
    {"and", 1, 0xF0, 0x0F, CF | OF, 0x00, ZF | PF},
    {"and", 2, 0x8001, 0xFF01, CF | OF, 0x8001, SF},
    {"and", 4, 0xFFFFFFFF, 0x80000080, 0, 0x80000080, SF},
    {"and", 8, 0xFFFF0000FFFF0000, 0x0F0F0F0F0F0F0F0F, kAll6, 0x0F0F00000F0F0000, PF},
    {"or", 1, 0x00, 0x00, CF | OF, 0x00, ZF | PF},
    {"or", 2, 0x0F00, 0x00F0, 0, 0x0FF0, PF},
    {"or", 4, 0x80000000, 0x3, CF | OF, 0x80000003, SF | PF},
    {"or", 8, 0x100000000, 0x1, kAll6, 0x100000001, 0},
    {"xor", 1, 0x0F, 0xF1, CF | OF, 0xFE, SF},
    {"xor", 2, 0xFFFF, 0xFFFF, CF | OF, 0x0, ZF | PF},
    {"xor", 4, 0xAAAAAAAA, 0x55555555, 0, 0xFFFFFFFF, SF | PF},
    {"xor", 8, 0x8000000000000000, 0x8000000000000001, kAll6, 0x1, 0},
    {"test", 1, 0x80, 0x80, CF | OF, 0, SF},
    {"test", 2, 0x00FF, 0xFF00, CF | OF, 0, ZF | PF},
    {"test", 4, 0x7, 0x3, 0, 0, PF},
    {"test", 8, 0x8000000000000000, 0x8000000000000000, 0, 0, SF | PF},
    // ---- NOT: flags unaffected
    {"not", 1, 0x0F, 0, kAll6, 0xF0, kAll6},
    {"not", 2, 0x1234, 0, 0, 0xEDCB, 0},
    {"not", 4, 0x0, 0, CF | ZF, 0xFFFFFFFF, CF | ZF},
    {"not", 8, 0x00FF00FF00FF00FF, 0, 0, 0xFF00FF00FF00FF00, 0},
    // ---- NEG: 0 - DEST; CF = (DEST != 0)
    {"neg", 1, 0x00, 0, CF | OF, 0x00, ZF | PF},
    {"neg", 1, 0x80, 0, 0, 0x80, CF | OF | SF},
    {"neg", 1, 0x01, 0, 0, 0xFF, CF | SF | AF | PF},
    {"neg", 2, 0x0001, 0, 0, 0xFFFF, CF | SF | AF | PF},
    {"neg", 4, 0x80000000, 0, 0, 0x80000000, CF | OF | SF | PF},
    {"neg", 8, 0x5, 0, 0, 0xFFFFFFFFFFFFFFFB, CF | SF | AF},
    // ---- INC/DEC: CF preserved
    {"inc", 1, 0x7F, 0, 0, 0x80, OF | SF | AF},
    {"inc", 1, 0x7F, 0, CF, 0x80, CF | OF | SF | AF},
    {"inc", 1, 0xFF, 0, 0, 0x00, ZF | AF | PF},  // wraps to 0 without setting CF
    {"inc", 1, 0xFF, 0, CF | SF | OF, 0x00, CF | ZF | AF | PF},
    {"inc", 2, 0xFFFF, 0, 0, 0x0, ZF | AF | PF},
    {"inc", 4, 0x7FFFFFFF, 0, CF, 0x80000000, CF | OF | SF | AF | PF},
    {"inc", 8, ~0ull, 0, 0, 0x0, ZF | AF | PF},
    {"inc", 8, 0x0F, 0, CF, 0x10, CF | AF},
    {"dec", 1, 0x80, 0, 0, 0x7F, OF | AF},
    {"dec", 1, 0x00, 0, 0, 0xFF, SF | AF | PF},  // wraps without setting CF
    {"dec", 1, 0x01, 0, CF, 0x00, CF | ZF | PF},
    {"dec", 2, 0x8000, 0, CF, 0x7FFF, CF | OF | AF | PF},
    {"dec", 4, 0x0, 0, 0, 0xFFFFFFFF, SF | AF | PF},
    {"dec", 8, 0x8000000000000000, 0, 0, 0x7FFFFFFFFFFFFFFF, OF | AF | PF},
};

}  // namespace

TEST_CASE("ALU register forms: results and flags in 64-bit mode", "[alu]") {
    for (const AluCase& c : kCases) check_alu(64, c);
}

TEST_CASE("ALU register forms: 8/16/32-bit operands in 32-bit and 16-bit code", "[alu]") {
    for (const AluCase& c : kCases) {
        if (c.size == 8) continue;
        check_alu(32, c);
        check_alu(16, c);
    }
}

TEST_CASE("ALU immediate forms", "[alu]") {
    SECTION("add al, imm8 (04 ib)") {
        auto r = run_ok(64, "add al, 0x80\nhlt", {.regs = {{RAX, 0x1180}}});
        CHECK_HEX(r.reg(RAX), 0x1100);
        CHECK_FLAGS(r, kAll6, CF | OF | ZF | PF);
    }
    SECTION("add r64, imm8 is sign-extended (REX.W 83 /0 ib)") {
        auto r = run_ok(64, "add rax, byte -1\nhlt", {.regs = {{RAX, 1}}});
        CHECK_HEX(r.reg(RAX), 0);
        CHECK_FLAGS(r, kAll6, CF | ZF | AF | PF);
    }
    SECTION("sub rax, imm32 is sign-extended to 64 bits (REX.W 2D id)") {
        // 0 - 0xFFFFFFFF80000000 = 0x80000000 with a borrow.
        auto r = run_ok(64, "sub rax, -0x80000000\nhlt", {.regs = {{RAX, 0}}});
        CHECK_HEX(r.reg(RAX), 0x80000000);
        CHECK_FLAGS(r, kAll6, CF | PF);
    }
    SECTION("and eax, imm8 sign-extended to 32 bits, result zero-extended") {
        auto r = run_ok(64, "and eax, byte -16\nhlt", {.regs = {{RAX, ~0ull}}, .flags = CF | OF});
        CHECK_HEX(r.reg(RAX), 0xFFFFFFF0);
        CHECK_FLAGS(r, kAll6 & ~AF, SF | PF);
    }
    SECTION("cmp r32, imm32 does not write the register") {
        auto r = run_ok(64, "cmp ecx, 0x12345678\nhlt", {.regs = {{RCX, 0xFFFFFFFF12345678}}});
        CHECK_HEX(r.reg(RCX), 0xFFFFFFFF12345678);
        CHECK_FLAGS(r, kAll6, ZF | PF);
    }
    SECTION("xor r16, imm16 keeps bits 63:16") {
        auto r = run_ok(64, "xor bx, 0x8001\nhlt", {.regs = {{RBX, 0x1111111111110001}}});
        CHECK_HEX(r.reg(RBX), 0x1111111111118000);
        CHECK_FLAGS(r, kAll6 & ~AF, SF | PF);
    }
    SECTION("adc r8 (REX), imm8 with CF=1") {
        auto r = run_ok(64, "adc r9b, 0x7F\nhlt", {.regs = {{R9, 0xFF00}}, .flags = CF});
        CHECK_HEX(r.reg(R9), 0xFF80);
        CHECK_FLAGS(r, kAll6, OF | SF | AF);
    }
    SECTION("sbb r/m16, imm8 sign-extended (83 /3 ib)") {
        // 0x0000 - 0xFFFF - 1 = 0x0000 with a borrow; signed 0 - (-1) - 1 = 0: no overflow.
        auto r =
            run_ok(64, "sbb dx, byte -1\nhlt", {.regs = {{RDX, 0x7777777777770000}}, .flags = CF});
        CHECK_HEX(r.reg(RDX), 0x7777777777770000);
        CHECK_FLAGS(r, kAll6, CF | ZF | AF | PF);
    }
    SECTION("test rax, imm32 sign-extended (REX.W A9 id)") {
        auto r = run_ok(64, "test rax, -1\nhlt",
                        {.regs = {{RAX, 0x8000000000000000}}, .flags = CF | OF});
        CHECK_HEX(r.reg(RAX), 0x8000000000000000);
        CHECK_FLAGS(r, kAll6 & ~AF, SF | PF);
    }
    SECTION("sub eax, imm32 in 16-bit code (66 2D id)") {
        auto r = run_ok(16, "sub eax, 0x10000\nhlt", {.regs = {{RAX, 0x0000FFFF}}});
        CHECK_HEX(r.reg(RAX) & 0xFFFFFFFF, 0xFFFFFFFF);
        CHECK_FLAGS(r, kAll6, CF | SF | PF);
    }
}

TEST_CASE("ALU memory forms", "[alu]") {
    constexpr u64 d = kDataBase;
    SECTION("add m64, r64") {
        auto r = run_ok(64, "add [0x20000], rbx\nhlt", {.regs = {{RBX, 1}}, .mem = {{d, ~0ull}}});
        CHECK_HEX(mem64(r, d), 0);
        CHECK_FLAGS(r, kAll6, CF | ZF | AF | PF);
    }
    SECTION("sub r32, m32 with base + index*4 + disp") {
        auto r = run_ok(
            64, "sub ecx, [rbx+rsi*4+8]\nhlt",
            {.regs = {{RCX, 0xFFFFFFFF00000000}, {RBX, d}, {RSI, 2}}, .mem = {{d + 16, 1, 4}}});
        CHECK_HEX(r.reg(RCX), 0xFFFFFFFF);
        CHECK_FLAGS(r, kAll6, CF | SF | AF | PF);
    }
    SECTION("xor m8, imm8 touches only its byte") {
        auto r = run_ok(64, "xor byte [rbx+1], 0xFF\nhlt",
                        {.regs = {{RBX, d}}, .mem = {{d, 0x4433221100ull}}});
        CHECK_HEX(mem64(r, d), 0x443322EE00ull);
        CHECK_FLAGS(r, kAll6 & ~AF, SF | PF);  // 0xEE: six bits set
    }
    SECTION("inc m16 keeps CF") {
        auto r = run_ok(64, "inc word [rbx]\nhlt",
                        {.regs = {{RBX, d}}, .flags = CF, .mem = {{d, 0x1234FFFF, 4}}});
        CHECK_HEX(mem32(r, d), 0x12340000);
        CHECK_FLAGS(r, kAll6, CF | ZF | AF | PF);
    }
    SECTION("dec m32") {
        auto r = run_ok(64, "dec dword [rbx]\nhlt",
                        {.regs = {{RBX, d}}, .mem = {{d, 0x0000000100000000ull}}});
        CHECK_HEX(mem64(r, d), 0x00000001FFFFFFFFull);
        CHECK_FLAGS(r, kAll6, SF | AF | PF);
    }
    SECTION("neg m32") {
        auto r = run_ok(64, "neg dword [rbx]\nhlt",
                        {.regs = {{RBX, d}}, .mem = {{d, 0x0000000700000001ull}}});
        CHECK_HEX(mem64(r, d), 0x00000007FFFFFFFFull);
        CHECK_FLAGS(r, kAll6, CF | SF | AF | PF);
    }
    SECTION("not m64 leaves the flags") {
        auto r = run_ok(64, "not qword [rbx]\nhlt",
                        {.regs = {{RBX, d}}, .flags = ZF | OF, .mem = {{d, 0x0F0F}}});
        CHECK_HEX(mem64(r, d), 0xFFFFFFFFFFFFF0F0ull);
        CHECK_FLAGS(r, kAll6, ZF | OF);
    }
    SECTION("cmp m8, r8 does not write memory") {
        auto r = run_ok(64, "cmp [rbx], al\nhlt",
                        {.regs = {{RAX, 0x81}, {RBX, d}}, .mem = {{d, 0x01, 1}}});
        CHECK_HEX(mem8(r, d), 0x01);
        CHECK_FLAGS(r, kAll6, CF | OF | SF);  // 0x01 - 0x81 = 0x80: borrow, 1-(-127) overflows
    }
    SECTION("test m32, r32") {
        auto r = run_ok(64, "test [rbx], ecx\nhlt",
                        {.regs = {{RCX, 0xF0}, {RBX, d}}, .flags = CF | OF, .mem = {{d, 0x0F, 4}}});
        CHECK_FLAGS(r, kAll6 & ~AF, ZF | PF);
    }
    SECTION("adc m16, r16") {
        auto r =
            run_ok(64, "adc [rbx], cx\nhlt",
                   {.regs = {{RCX, 0x7FFF}, {RBX, d}}, .flags = CF, .mem = {{d, 0xAAAA0000, 4}}});
        CHECK_HEX(mem32(r, d), 0xAAAA8000);
        CHECK_FLAGS(r, kAll6, OF | SF | AF | PF);
    }
    SECTION("and r64, m64 (RIP-relative)") {
        auto r = run_ok(64, "and rax, [rel v]\nhlt\nv: dq 0x00FF00FF00FF00FF",
                        {.regs = {{RAX, 0x0F0F0F0F0F0F0F0F}}});
        CHECK_HEX(r.reg(RAX), 0x000F000F000F000F);
    }
    SECTION("or m64, imm8 sign-extended") {
        auto r =
            run_ok(64, "or qword [rbx], byte -128\nhlt", {.regs = {{RBX, d}}, .mem = {{d, 0x1}}});
        CHECK_HEX(mem64(r, d), 0xFFFFFFFFFFFFFF81ull);
        CHECK_FLAGS(r, kAll6 & ~AF, SF | PF);
    }
    SECTION("lock add m32, r32") {
        auto r = run_ok(64, "lock add [rbx], eax\nhlt",
                        {.regs = {{RAX, 2}, {RBX, d}}, .mem = {{d, 0xFFFFFFFE, 4}}});
        CHECK_HEX(mem32(r, d), 0);
        CHECK_FLAGS(r, kAll6, CF | ZF | AF | PF);
    }
    SECTION("32-bit code: add m32, r32") {
        auto r = run_ok(32, "add [ebx], eax\nhlt",
                        {.regs = {{RAX, 0x80000000}, {RBX, d}}, .mem = {{d, 0x80000000, 4}}});
        CHECK_HEX(mem32(r, d), 0);
        CHECK_FLAGS(r, kAll6, CF | OF | ZF | PF);
    }
    SECTION("16-bit code: sub r16, [bx+si+disp]") {
        auto r = run_ok(
            16, "sub ax, [bx+si+2]\nhlt",
            {.regs = {{RAX, 0x0010}, {RBX, 0x8000}, {RSI, 0x0010}}, .mem = {{0x8012, 0x0011, 2}}});
        CHECK_HEX(r.reg(RAX) & 0xFFFF, 0xFFFF);
        CHECK_FLAGS(r, kAll6, CF | SF | AF | PF);
    }
}

TEST_CASE("ALU register-write rules in 64-bit mode", "[alu]") {
    SECTION("32-bit results zero-extend; CMP and TEST write nothing") {
        auto r = run_ok(64, R"(
            add eax, 0
            cmp ebx, 0
            test ecx, ecx
            xor edx, edx
            inc esi
            neg edi
            not r8d
            hlt)",
                        {.regs = {{RAX, 0x1234567800000001},
                                  {RBX, 0x1234567800000001},
                                  {RCX, 0x1234567800000001},
                                  {RDX, 0x1234567800000001},
                                  {RSI, 0x12345678FFFFFFFF},
                                  {RDI, 0x1234567800000001},
                                  {R8, 0x1234567800000001}}});
        CHECK_HEX(r.reg(RAX), 0x1);
        CHECK_HEX(r.reg(RBX), 0x1234567800000001);
        CHECK_HEX(r.reg(RCX), 0x1234567800000001);
        CHECK_HEX(r.reg(RDX), 0x0);
        CHECK_HEX(r.reg(RSI), 0x0);
        CHECK_HEX(r.reg(RDI), 0xFFFFFFFF);
        CHECK_HEX(r.reg(R8), 0xFFFFFFFE);
    }
    SECTION("AH, BH, CH, DH are bits 15:8 of RAX..RDX") {
        auto r =
            run_ok(64, "add ah, bh\nhlt", {.regs = {{RAX, 0xFFFFFFFFFFFF7F34}, {RBX, 0x0100}}});
        CHECK_HEX(r.reg(RAX), 0xFFFFFFFFFFFF8034);
        CHECK_HEX(r.reg(RBX), 0x0100);
        CHECK_FLAGS(r, kAll6, OF | SF | AF);
    }
    SECTION("high-byte forms of SUB, XOR, INC, NEG, ADC") {
        auto r = run_ok(64, R"(
            sub ch, dh
            xor dh, al
            inc bh
            neg ah
            adc al, ch
            hlt)",
                        {.regs = {{RAX, 0x7777777777770103},
                                  {RBX, 0x888888888888FF11},
                                  {RCX, 0x9999999999990522},
                                  {RDX, 0xAAAAAAAAAAAA0733}}});
        // sub ch, dh: 0x05 - 0x07 = 0xFE (CF=1); xor dh, al: 0x07 ^ 0x03 = 0x04;
        // inc bh: 0xFF -> 0x00 (CF kept); neg ah: 0x01 -> 0xFF (CF=1);
        // adc al, ch: 0x03 + 0xFE + 1 = 0x102 -> 0x02, CF=1.
        CHECK_HEX(r.reg(RCX), 0x999999999999FE22);
        CHECK_HEX(r.reg(RDX), 0xAAAAAAAAAAAA0433);
        CHECK_HEX(r.reg(RBX), 0x8888888888880011);
        CHECK_HEX(r.reg(RAX), 0x777777777777FF02);
        // 0x03 + 0xFE + 1: carry out of bit 7 and of bit 3 (3 + 0xE + 1 = 0x12); 3 + (-2) + 1 = 2:
        // no overflow.
        CHECK_FLAGS(r, kAll6, CF | AF);
    }
    SECTION("REX byte registers SIL/DIL and R8B-R15B, 16-bit R15W, 32-bit R10D") {
        auto r = run_ok(64, R"(
            add sil, dil
            sub r8b, r9b
            inc r15w
            add r10d, r11d
            hlt)",
                        {.regs = {{RSI, 0x1111111111111180},
                                  {RDI, 0x2222222222222280},
                                  {R8, 0x3333333333333300},
                                  {R9, 0x4444444444444401},
                                  {R15, 0x555555555555FFFF},
                                  {R10, 0x66666666FFFFFFFF},
                                  {R11, 0x7777777700000002}}});
        CHECK_HEX(r.reg(RSI), 0x1111111111111100);
        CHECK_HEX(r.reg(RDI), 0x2222222222222280);
        CHECK_HEX(r.reg(R8), 0x33333333333333FF);
        CHECK_HEX(r.reg(R15), 0x5555555555550000);
        CHECK_HEX(r.reg(R10), 0x1);
        CHECK_FLAGS(r, kAll6,
                    CF | AF);  // last: 0xFFFFFFFF + 2 = 1 with carry; F+2 carries out of bit 3
    }
}

TEST_CASE("ALU: LOCK on a register destination raises #UD", "[alu]") {
    // SDM Vol. 2, LOCK: #UD if the destination is not a memory operand.
    auto r = run_fault(64, "db 0xF0, 0x01, 0xD8\nhlt", vec::UD, kCodeBase,
                       {.regs = {{RAX, 5}, {RBX, 7}}});
    CHECK_HEX(r.reg(RAX), 5);  // lock add eax, ebx did not execute
}

TEST_CASE("ALU documented choices for undefined results: AND/OR/XOR/TEST clear AF",
          "[alu][documented-choice]") {
    // docs/semantics/integer.md: AF after AND OR XOR TEST is cleared (SDM: undefined).
    for (const char* op : {"and", "or", "xor", "test"}) {
        INFO(op);
        auto r = run_ok(64, std::string(op) + " eax, ebx\nhlt",
                        {.regs = {{RAX, 0xF}, {RBX, 0x1}}, .flags = AF});
        CHECK_FLAGS(r, AF, 0);
    }
}
