// BT BTS BTR BTC BSF BSR TZCNT LZCNT POPCNT (SDM Vol. 2 instruction pages).
//
// BT*: CF = the selected bit; ZF unaffected; OF SF AF PF undefined. A register bit
// base takes the offset modulo its width; a memory bit base with a register offset
// addresses a signed bit string starting at the operand's byte (SDM Vol. 1, 3.1.1.9:
// bit n is bit n mod 8 of byte EA + floor(n / 8)); an immediate offset is taken
// modulo the operand width.
// BSF/BSR: ZF = (source == 0); destination undefined for a zero source; other flags undefined.
// TZCNT/LZCNT: CF = (source == 0), ZF = (result == 0); OF SF AF PF undefined.
// POPCNT: ZF = (source == 0), OF SF AF CF PF cleared.
#include "tests/unit_common.h"

using namespace pmusim;
using namespace pmusim::unit;

namespace {
constexpr u64 d = kDataBase;
constexpr u64 kBtFlags = CF | ZF;   // defined after BT* (ZF unaffected)
constexpr u64 kCntFlags = CF | ZF;  // defined after TZCNT/LZCNT
}  // namespace

TEST_CASE("BT/BTS/BTR/BTC with a register bit base", "[bitops]") {
    struct Case {
        const char* insn;
        u64 rax, rcx, flags_in;
        u64 rax_out;
        bool cf;
    };
    const Case cases[] = {
        {"bt eax, ecx", 0xFFFFFFFF00000008, 35, ZF, 0xFFFFFFFF00000008,
         true},                                          // 35 mod 32 = 3; no write
        {"bt ax, cx", 0x8000, 0xFFFF, 0, 0x8000, true},  // 0xFFFF mod 16 = 15
        {"bt rax, rcx", 0x8000000000000000, 127, 0, 0x8000000000000000, true},  // 127 mod 64 = 63
        {"bt rax, rcx", 0x8000000000000000, 62, CF, 0x8000000000000000, false},
        {"bts eax, 31", 0xFFFFFFFF00000000, 0, CF | ZF, 0x80000000, false},  // zero-extends
        {"btr rax, 40", ~0ull, 0, 0, 0xFFFFFEFFFFFFFFFF, true},
        {"btc ax, 15", 0x1234567812345678, 0, 0, 0x123456781234D678, false},
        {"bt eax, 33", 0x2, 0, 0, 0x2, true},  // immediate masked to 5 bits
        {"btc rax, rcx", 0x0, 64 + 5, 0, 0x20, false},
        {"btr ax, cx", 0xFFFF, 0x0010, 0, 0xFFFE, true},  // 16 mod 16 = 0
    };
    for (const Case& c : cases) {
        INFO(c.insn << std::hex << " rax=" << c.rax << " rcx=" << c.rcx);
        auto r = run_ok(64, std::string(c.insn) + "\nhlt",
                        {.regs = {{RAX, c.rax}, {RCX, c.rcx}}, .flags = c.flags_in});
        CHECK_HEX(r.reg(RAX), c.rax_out);
        CHECK_HEX(r.reg(RCX), c.rcx);
        CHECK_FLAGS(r, kBtFlags, (c.cf ? CF : 0) | (c.flags_in & ZF));
    }
}

TEST_CASE("BT/BTS/BTR/BTC with a memory bit base and an immediate offset", "[bitops]") {
    SECTION("bt m32, imm8 takes the offset modulo 32") {
        auto r = run_ok(64, "bt dword [rbx], 33\nhlt",
                        {.regs = {{RBX, d}}, .mem = {{d, 0x2, 4}, {d + 4, 0x0, 4}}});
        CHECK_FLAGS(r, kBtFlags, CF);
    }
    SECTION("bts m16, imm8") {
        auto r = run_ok(64, "bts word [rbx], 15\nhlt", {.regs = {{RBX, d}}, .mem = {{d, 0x0001}}});
        CHECK_HEX(mem64(r, d), 0x8001);
        CHECK_FLAGS(r, kBtFlags, 0);
    }
    SECTION("btr m64, imm8") {
        auto r = run_ok(64, "btr qword [rbx], 63\nhlt",
                        {.regs = {{RBX, d}}, .mem = {{d, 0x8000000000000001}}});
        CHECK_HEX(mem64(r, d), 0x1);
        CHECK_FLAGS(r, kBtFlags, CF);
    }
    SECTION("btc m64, imm8 takes the offset modulo 64") {
        auto r = run_ok(64, "btc qword [rbx], 67\nhlt",
                        {.regs = {{RBX, d}}, .mem = {{d, 0xFF}, {d + 8, 0x0}}});
        CHECK_HEX(mem64(r, d), 0xF7);
        CHECK_HEX(mem64(r, d + 8), 0x0);
        CHECK_FLAGS(r, kBtFlags, CF);
    }
}

TEST_CASE("BT/BTS/BTR/BTC with a memory bit base and a register offset", "[bitops]") {
    SECTION("bt m32, r32 beyond the operand") {
        auto r = run_ok(64, "bt dword [rbx], ecx\nhlt",
                        {.regs = {{RBX, d}, {RCX, 35}}, .mem = {{d, 0x0000000800000000}}});
        CHECK_FLAGS(r, kBtFlags, CF);  // bit 3 of the byte at EA + 4
    }
    SECTION("bts m32, r32 with offset -1 sets bit 7 of the byte before EA") {
        auto r = run_ok(64, "bts dword [rbx], ecx\nhlt",
                        {.regs = {{RBX, d + 8}, {RCX, 0xFFFFFFFF}}, .mem = {{d, 0}, {d + 8, 0}}});
        CHECK_HEX(mem64(r, d), 0x8000000000000000);
        CHECK_HEX(mem64(r, d + 8), 0x0);
        CHECK_FLAGS(r, kBtFlags, 0);
    }
    SECTION("btr m64, r64 with offset -65: bit 7 of the byte at EA - 9") {
        auto r = run_ok(64, "btr qword [rbx], rcx\nhlt",
                        {.regs = {{RBX, d + 16}, {RCX, u64(-65)}},
                         .mem = {{d, ~0ull}, {d + 8, ~0ull}, {d + 16, ~0ull}}});
        CHECK_HEX(mem64(r, d), 0x7FFFFFFFFFFFFFFF);
        CHECK_HEX(mem64(r, d + 8), ~0ull);
        CHECK_HEX(mem64(r, d + 16), ~0ull);
        CHECK_FLAGS(r, kBtFlags, CF);
    }
    SECTION("btc m16, r16 with offset -32768: bit 0 of the byte at EA - 4096") {
        auto r = run_ok(64, "btc word [rbx], cx\nhlt",
                        {.regs = {{RBX, d + 0x1000}, {RCX, 0xFFFFFFFFFFFF8000}},
                         .mem = {{d, 0x0}, {d + 0x1000, 0x0}}});
        CHECK_HEX(mem64(r, d), 0x1);
        CHECK_HEX(mem64(r, d + 0x1000), 0x0);
        CHECK_FLAGS(r, kBtFlags, 0);
    }
    SECTION("bt m16, r16 with offset 32767: bit 7 of the byte at EA + 4095") {
        auto r = run_ok(64, "bt word [rbx], cx\nhlt",
                        {.regs = {{RBX, d}, {RCX, 0x7FFF}}, .mem = {{d + 4094, 0x8000, 2}}});
        CHECK_FLAGS(r, kBtFlags, CF);
    }
    SECTION("bts m64, r64 with a large positive offset") {
        auto r = run_ok(64, "bts qword [rbx], rcx\nhlt",
                        {.regs = {{RBX, d}, {RCX, 0x1000 * 8 + 2}}, .mem = {{d + 0x1000, 0x1}}});
        CHECK_HEX(mem64(r, d + 0x1000), 0x5);
        CHECK_FLAGS(r, kBtFlags, 0);
    }
    SECTION("lock btr m32, r32") {
        auto r = run_ok(64, "lock btr [rbx], eax\nhlt",
                        {.regs = {{RAX, 36}, {RBX, d}}, .mem = {{d, 0x0000001000000000}}});
        CHECK_HEX(mem64(r, d), 0x0);
        CHECK_FLAGS(r, kBtFlags, CF);
    }
    SECTION("32-bit code: bt m32, r32 with offset -8 is bit 0 of the byte at EA - 1") {
        auto r = run_ok(32, "bt dword [ebx], ecx\nhlt",
                        {.regs = {{RBX, d + 4}, {RCX, 0xFFFFFFF8}}, .mem = {{d, 0x01000000, 4}}});
        CHECK_FLAGS(r, kBtFlags, CF);
    }
    SECTION("16-bit code: bts m16, r16 with offset -16 is bit 0 of the word at EA - 2") {
        auto r = run_ok(16, "bts word [bx], ax\nhlt",
                        {.regs = {{RAX, 0xFFF0}, {RBX, 0x8002}}, .mem = {{0x8000, 0x0, 4}}});
        CHECK_HEX(mem32(r, 0x8000), 0x1);
        CHECK_FLAGS(r, kBtFlags, 0);
    }
}

TEST_CASE("BSF and BSR", "[bitops]") {
    struct Case {
        int bits;
        const char* insn;
        u64 rax, rcx;
        u64 rax_out;
    };
    const Case cases[] = {
        {64, "bsf eax, ecx", 0xFFFFFFFFFFFFFFFF, 0x00080000, 19},
        {64, "bsr eax, ecx", 0xFFFFFFFFFFFFFFFF, 0x00080001, 19},
        {64, "bsf rax, rcx", 0, 0x8000000000000000, 63},
        {64, "bsr rax, rcx", 0, 0x8000000000000001, 63},
        {64, "bsf rax, rcx", 0, 0xFFFFFFFFFFFFFFFF, 0},
        {64, "bsr ax, cx", 0xFFFFFFFFFFFFFFFF, 0x0001, 0xFFFFFFFFFFFF0000},
        {64, "bsf ax, cx", 0x1111111111111111, 0x8000, 0x111111111111000F},
        {32, "bsr eax, ecx", 0, 0xFFFFFFFF, 31},
        {16, "bsf ax, cx", 0, 0x0100, 8},
    };
    for (const Case& c : cases) {
        INFO(c.bits << "-bit: " << c.insn << std::hex << " rcx=" << c.rcx);
        auto r = run_ok(c.bits, std::string(c.insn) + "\nhlt",
                        {.regs = {{RAX, c.rax}, {RCX, c.rcx}}, .flags = ZF});
        CHECK_HEX(r.reg(RAX) & (c.bits == 64 ? ~0ull : 0xFFFFFFFF), c.rax_out);
        CHECK_FLAGS(r, ZF, 0);
    }
    SECTION("memory source") {
        auto r = run_ok(64, "bsf ecx, [rbx]\nhlt",
                        {.regs = {{RCX, ~0ull}, {RBX, d}}, .mem = {{d, 0x00010000, 4}}});
        CHECK_HEX(r.reg(RCX), 16);
        CHECK_FLAGS(r, ZF, 0);
    }
    SECTION("a zero source sets ZF") {
        for (const char* insn : {"bsf eax, ecx", "bsr rax, rcx", "bsf ax, cx", "bsr eax, [rbx]"}) {
            INFO(insn);
            auto r = run_ok(64, std::string(insn) + "\nhlt",
                            {.regs = {{RAX, 5}, {RCX, 0}, {RBX, d}}, .mem = {{d, 0}}});
            CHECK_FLAGS(r, ZF, ZF);
        }
    }
}

TEST_CASE("TZCNT and LZCNT", "[bitops]") {
    struct Case {
        const char* insn;
        u64 rax, rcx;
        u64 rax_out;
        u64 flags;  // CF and ZF
    };
    const Case cases[] = {
        {"tzcnt eax, ecx", 0xFFFFFFFFFFFFFFFF, 0x0, 32, CF},
        {"tzcnt eax, ecx", 0xFFFFFFFFFFFFFFFF, 0x1, 0, ZF},
        {"tzcnt eax, ecx", 0, 0xFFFFFFFF80000000, 31, 0},  // only ECX counts
        {"tzcnt ax, cx", 0x1111111111111111, 0x8000, 0x111111111111000F, 0},
        {"tzcnt ax, cx", 0x1111111111111111, 0x0, 0x1111111111110010, CF},
        {"tzcnt rax, rcx", 0, 0x0, 64, CF},
        {"tzcnt rax, rcx", 0, 0x8000000000000000, 63, 0},
        {"lzcnt eax, ecx", 0xFFFFFFFFFFFFFFFF, 0x0, 32, CF},
        {"lzcnt eax, ecx", 0xFFFFFFFFFFFFFFFF, 0x80000000, 0, ZF},
        {"lzcnt eax, ecx", 0, 0xFFFFFFFF00000001, 31, 0},
        {"lzcnt ax, cx", 0x1111111111111111, 0x0001, 0x111111111111000F, 0},
        {"lzcnt ax, cx", 0x1111111111111111, 0x0000, 0x1111111111110010, CF},
        {"lzcnt rax, rcx", 0, 0x1, 63, 0},
        {"lzcnt rax, rcx", 0, 0x0, 64, CF},
    };
    for (const Case& c : cases) {
        INFO(c.insn << std::hex << " rcx=" << c.rcx);
        auto r = run_ok(64, std::string(c.insn) + "\nhlt",
                        {.regs = {{RAX, c.rax}, {RCX, c.rcx}}, .flags = kCntFlags & ~c.flags});
        CHECK_HEX(r.reg(RAX), c.rax_out);
        CHECK_FLAGS(r, kCntFlags, c.flags);
    }
    SECTION("memory sources") {
        auto r =
            run_ok(64, "tzcnt rax, [rbx]\nlzcnt rcx, [rbx+8]\nhlt",
                   {.regs = {{RBX, d}}, .mem = {{d, 0x100000000}, {d + 8, 0x00000000FFFFFFFF}}});
        CHECK_HEX(r.reg(RAX), 32);
        CHECK_HEX(r.reg(RCX), 32);
        CHECK_FLAGS(r, kCntFlags, 0);
    }
    SECTION("32-bit code") {
        auto r = run_ok(32, "lzcnt eax, ecx\ntzcnt edx, ecx\nhlt", {.regs = {{RCX, 0x00F00000}}});
        CHECK_HEX(r.reg(RAX), 8);
        CHECK_HEX(r.reg(RDX), 20);
    }
}

TEST_CASE("POPCNT", "[bitops]") {
    struct Case {
        const char* insn;
        u64 rax, rcx;
        u64 rax_out;
        u64 flags;  // only ZF can be set
    };
    const Case cases[] = {
        {"popcnt eax, ecx", ~0ull, 0xF0F0F0F0, 16, 0},
        {"popcnt rax, rcx", ~0ull, 0x0, 0, ZF},
        {"popcnt ax, cx", 0x1111111111111111, 0xFFFF, 0x1111111111110010, 0},
        {"popcnt ax, cx", 0x1111111111111111, 0xFFFF0000, 0x1111111111110000, ZF},
        {"popcnt rax, rcx", 0, ~0ull, 64, 0},
        {"popcnt eax, ecx", 0, 0xFFFFFFFF00000001, 1, 0},
    };
    for (const Case& c : cases) {
        INFO(c.insn << std::hex << " rcx=" << c.rcx);
        auto r = run_ok(64, std::string(c.insn) + "\nhlt",
                        {.regs = {{RAX, c.rax}, {RCX, c.rcx}}, .flags = kAll6 & ~ZF});
        CHECK_HEX(r.reg(RAX), c.rax_out);
        CHECK_FLAGS(r, kAll6, c.flags);
    }
    SECTION("memory source and a REX register") {
        auto r = run_ok(
            64, "popcnt r8d, [rbx]\nhlt",
            {.regs = {{R8, ~0ull}, {RBX, d}}, .flags = CF, .mem = {{d, 0x8000000000000001}}});
        CHECK_HEX(r.reg(R8), 1);
        CHECK_FLAGS(r, kAll6, 0);
    }
}

TEST_CASE("Bit instruction documented choices for undefined results",
          "[bitops][documented-choice]") {
    // docs/semantics/integer.md (observed on an Intel Xeon): BT* leave OF SF AF PF
    // unchanged; BSF/BSR clear OF SF AF CF and set PF from the bit index; TZCNT/LZCNT
    // clear OF SF AF PF. BSF/BSR with a zero source leave the destination unchanged
    // (all 64 bits; the SDM says "undefined").
    const u64 others = OF | SF | AF | PF;
    for (u64 f : {u64(0), others}) {
        INFO(std::hex << "flags in " << f);
        auto r =
            run_ok(64, "bt eax, ecx\nbtc eax, 4\nhlt", {.regs = {{RAX, 1}, {RCX, 0}}, .flags = f});
        CHECK_FLAGS(r, others, f);
        auto s = run_ok(64, "bsf eax, ecx\nhlt", {.regs = {{RCX, 6}}, .flags = f | CF});
        CHECK_FLAGS(s, others | CF, 0);  // index 1: odd parity, PF = 0
        auto u = run_ok(64, "bsr eax, ecx\nhlt", {.regs = {{RCX, 8}}, .flags = f});
        CHECK_FLAGS(u, others | CF, PF);  // index 3 = 0b11: even parity, PF = 1
        auto t =
            run_ok(64, "tzcnt eax, ecx\nlzcnt edx, ecx\nhlt", {.regs = {{RCX, 6}}, .flags = f});
        CHECK_FLAGS(t, others, 0);
    }
    SECTION("BSF/BSR with a zero source keep the whole destination") {
        auto r =
            run_ok(64, "bsf eax, ecx\nbsr rdx, rcx\nbsf bx, cx\nhlt",
                   {.regs = {{RAX, 0xAAAAAAAA00000005}, {RDX, 0x1234}, {RBX, 0x5678}, {RCX, 0}}});
        CHECK_HEX(r.reg(RAX), 0xAAAAAAAA00000005);
        CHECK_HEX(r.reg(RDX), 0x1234);
        CHECK_HEX(r.reg(RBX), 0x5678);
        CHECK_FLAGS(r, ZF, ZF);
    }
}
