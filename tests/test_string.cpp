// MOVS STOS LODS CMPS SCAS with REP/REPE/REPNE (SDM Vol. 2 instruction pages and
// "REP/REPE/REPZ/REPNE/REPNZ"). The source is DS:rSI, the destination ES:rDI; both
// step by the operand size, up with DF=0 and down with DF=1. The index and count
// registers are those of the address size (SI/DI/CX, ESI/EDI/ECX or RSI/RDI/RCX).
// CMPS computes [rSI] - [rDI]; SCAS computes rAX - [rDI]; both set flags like CMP.
#include "tests/unit_common.h"

using namespace pmusim;
using namespace pmusim::unit;

namespace {

constexpr u64 src = kDataBase, dst = kDataBase + 0x100;
constexpr u64 kPattern = 0x0807060504030201ull;
constexpr u64 kFill = 0xEEEEEEEEEEEEEEEEull;

const char* suffix(unsigned size) {
    return size == 1 ? "b" : size == 2 ? "w" : size == 4 ? "d" : "q";
}

/// Bytes stored as a sequence starting at `addr`.
std::pair<u64, std::vector<u8>> text(u64 addr, const std::string& s) {
    return {addr, std::vector<u8>(s.begin(), s.end())};
}

}  // namespace

TEST_CASE("MOVS of each size, DF=0 and DF=1", "[string]") {
    for (unsigned size : {1u, 2u, 4u, 8u}) {
        for (bool df : {false, true}) {
            INFO("movs" << suffix(size) << " DF=" << df);
            // With DF=1 the element at the current addresses is still copied, then the
            // pointers move down (SDM MOVS, Operation).
            auto r = run_ok(
                64, std::string("movs") + suffix(size) + "\nhlt",
                {.regs = {{RSI, src + 8}, {RDI, dst + 8}},
                 .flags = df ? DF : 0,
                 .mem = {{src + 8, kPattern}, {dst, kFill}, {dst + 8, kFill}, {dst + 16, kFill}}});
            const u64 m = size_mask(size);
            CHECK_HEX(mem64(r, dst + 8), (kFill & ~m) | (kPattern & m));
            CHECK_HEX(mem64(r, dst), kFill);
            CHECK_HEX(r.reg(RSI), df ? src + 8 - size : src + 8 + size);
            CHECK_HEX(r.reg(RDI), df ? dst + 8 - size : dst + 8 + size);
        }
    }
}

TEST_CASE("REP MOVS", "[string]") {
    SECTION("rep movsq, DF=0") {
        auto r = run_ok(64, "rep movsq\nhlt",
                        {.regs = {{RSI, src}, {RDI, dst}, {RCX, 4}},
                         .mem = {{src, 1},
                                 {src + 8, 2},
                                 {src + 16, 3},
                                 {src + 24, 4},
                                 {src + 32, 5},
                                 {dst + 32, kFill}}});
        for (int k = 0; k < 4; ++k) CHECK_HEX(mem64(r, dst + 8 * k), k + 1);
        CHECK_HEX(mem64(r, dst + 32), kFill);
        CHECK_HEX(r.reg(RCX), 0);
        CHECK_HEX(r.reg(RSI), src + 32);
        CHECK_HEX(r.reg(RDI), dst + 32);
    }
    SECTION("rep movsb, DF=1 copies downward") {
        auto r = run_ok(64, "rep movsb\nhlt",
                        {.regs = {{RSI, src + 2}, {RDI, dst + 2}, {RCX, 3}},
                         .flags = DF,
                         .mem = {{src, 0x44332211}, {dst, kFill}}});
        CHECK_HEX(mem64(r, dst), 0xEEEEEEEEEE332211);
        CHECK_HEX(r.reg(RSI), src - 1);
        CHECK_HEX(r.reg(RDI), dst - 1);
        CHECK_HEX(r.reg(RCX), 0);
    }
    SECTION("rep movsd with RCX=0 does nothing") {
        auto r = run_ok(64, "rep movsd\nhlt",
                        {.regs = {{RSI, src}, {RDI, dst}, {RCX, 0}},
                         .flags = CF | ZF,
                         .mem = {{src, 1}, {dst, kFill}}});
        CHECK_HEX(mem64(r, dst), kFill);
        CHECK_HEX(r.reg(RSI), src);
        CHECK_HEX(r.reg(RDI), dst);
        CHECK_FLAGS(r, ~0ull, CF | ZF | kFixed1);
    }
    SECTION("F2 (REPNE) on MOVS repeats like REP") {
        auto r = run_ok(
            64, "db 0xF2\nmovsw\nhlt",
            {.regs = {{RSI, src}, {RDI, dst}, {RCX, 2}}, .mem = {{src, kPattern}, {dst, kFill}}});
        CHECK_HEX(mem64(r, dst), 0xEEEEEEEE04030201);
        CHECK_HEX(r.reg(RCX), 0);
    }
}

TEST_CASE("STOS", "[string]") {
    const u64 rax = 0x1122334455667788;
    for (unsigned size : {1u, 2u, 4u, 8u}) {
        for (bool df : {false, true}) {
            INFO("stos" << suffix(size) << " DF=" << df);
            auto r = run_ok(
                64, std::string("stos") + suffix(size) + "\nhlt",
                {.regs = {{RAX, rax}, {RDI, dst}}, .flags = df ? DF : 0, .mem = {{dst, kFill}}});
            const u64 m = size_mask(size);
            CHECK_HEX(mem64(r, dst), (kFill & ~m) | (rax & m));
            CHECK_HEX(r.reg(RDI), df ? dst - size : dst + size);
            CHECK_HEX(r.reg(RAX), rax);
        }
    }
    SECTION("rep stosd") {
        auto r = run_ok(64, "rep stosd\nhlt",
                        {.regs = {{RAX, rax}, {RDI, dst}, {RCX, 3}}, .mem = {{dst + 8, kFill}}});
        CHECK_HEX(mem64(r, dst), 0x5566778855667788);
        CHECK_HEX(mem64(r, dst + 8), 0xEEEEEEEE55667788);
        CHECK_HEX(r.reg(RDI), dst + 12);
        CHECK_HEX(r.reg(RCX), 0);
    }
    SECTION("rep stosw, DF=1") {
        auto r = run_ok(64, "rep stosw\nhlt",
                        {.regs = {{RAX, 0xABCD}, {RDI, dst + 4}, {RCX, 2}},
                         .flags = DF,
                         .mem = {{dst, kFill}}});
        CHECK_HEX(mem64(r, dst), 0xEEEEABCDABCDEEEE);  // words at dst+4, then dst+2
        CHECK_HEX(r.reg(RDI), dst);
    }
}

TEST_CASE("LODS", "[string]") {
    const u64 rax = 0xFFFFFFFFFFFFFFFF;
    SECTION("each size") {
        for (unsigned size : {1u, 2u, 4u, 8u}) {
            INFO("lods" << suffix(size));
            auto r = run_ok(64, std::string("lods") + suffix(size) + "\nhlt",
                            {.regs = {{RAX, rax}, {RSI, src}}, .mem = {{src, kPattern}}});
            CHECK_HEX(r.reg(RAX), merged(rax, kPattern, size));
            CHECK_HEX(r.reg(RSI), src + size);
        }
    }
    SECTION("rep lodsb leaves the last element") {
        auto r = run_ok(64, "rep lodsb\nhlt",
                        {.regs = {{RAX, 0}, {RSI, src}, {RCX, 3}}, .mem = {{src, kPattern}}});
        CHECK_HEX(r.reg(RAX), 0x03);
        CHECK_HEX(r.reg(RSI), src + 3);
        CHECK_HEX(r.reg(RCX), 0);
    }
    SECTION("lodsw, DF=1") {
        auto r = run_ok(64, "lodsw\nhlt",
                        {.regs = {{RSI, src + 2}}, .flags = DF, .mem = {{src, kPattern}}});
        CHECK_HEX(r.reg(RAX), 0x0403);
        CHECK_HEX(r.reg(RSI), src);
    }
}

TEST_CASE("CMPS", "[string]") {
    SECTION("cmpsb: flags of [rSI] - [rDI]") {
        auto r =
            run_ok(64, "cmpsb\nhlt",
                   {.regs = {{RSI, src}, {RDI, dst}}, .mem = {{src, 0x05, 1}, {dst, 0x07, 1}}});
        CHECK_FLAGS(r, kAll6, CF | SF | AF);
        CHECK_HEX(r.reg(RSI), src + 1);
        CHECK_HEX(r.reg(RDI), dst + 1);
    }
    SECTION("cmpsw, DF=1") {
        auto r = run_ok(64, "cmpsw\nhlt",
                        {.regs = {{RSI, src}, {RDI, dst}},
                         .flags = DF,
                         .mem = {{src, 0x8000, 2}, {dst, 0x0001, 2}}});
        CHECK_FLAGS(r, kAll6, OF | AF | PF);  // 0x8000 - 1 = 0x7FFF
        CHECK_HEX(r.reg(RSI), src - 2);
        CHECK_HEX(r.reg(RDI), dst - 2);
    }
    SECTION("cmpsd and cmpsq equal") {
        auto r = run_ok(64, "cmpsd\nhlt",
                        {.regs = {{RSI, src}, {RDI, dst}},
                         .mem = {{src, 0xDEADBEEF, 4}, {dst, 0xDEADBEEF, 4}}});
        CHECK_FLAGS(r, kAll6, ZF | PF);
        auto s = run_ok(64, "cmpsq\nhlt",
                        {.regs = {{RSI, src}, {RDI, dst}}, .mem = {{src, 1}, {dst, 2}}});
        CHECK_FLAGS(s, kAll6, CF | SF | AF | PF);
        CHECK_HEX(s.reg(RSI), src + 8);
    }
    SECTION("repe cmpsb stops at the first difference") {
        auto r = run_ok(64, "repe cmpsb\nhlt",
                        {.regs = {{RSI, src}, {RDI, dst}, {RCX, 10}},
                         .bytes = {text(src, "abcXzzz"), text(dst, "abcYzzz")}});
        CHECK_HEX(r.reg(RCX), 6);
        CHECK_HEX(r.reg(RSI), src + 4);
        CHECK_HEX(r.reg(RDI), dst + 4);
        CHECK_FLAGS(r, kAll6, CF | SF | AF | PF);  // 'X' - 'Y' = 0xFF
    }
    SECTION("repe cmpsb runs out of count with everything equal") {
        auto r = run_ok(64, "repe cmpsb\nhlt",
                        {.regs = {{RSI, src}, {RDI, dst}, {RCX, 4}},
                         .bytes = {text(src, "abcd"), text(dst, "abcd")}});
        CHECK_HEX(r.reg(RCX), 0);
        CHECK_HEX(r.reg(RSI), src + 4);
        CHECK_FLAGS(r, kAll6, ZF | PF);
    }
    SECTION("repne cmpsw stops at the first equal element") {
        auto r = run_ok(64, "repne cmpsw\nhlt",
                        {.regs = {{RSI, src}, {RDI, dst}, {RCX, 10}},
                         .bytes = {text(src, "aabbccdd"), text(dst, "xxyyccdd")}});
        CHECK_HEX(r.reg(RCX), 7);
        CHECK_HEX(r.reg(RSI), src + 6);
        CHECK_FLAGS(r, ZF, ZF);
    }
    SECTION("repe cmpsq with RCX=0 changes nothing, not even flags") {
        auto r = run_ok(64, "repe cmpsq\nhlt",
                        {.regs = {{RSI, src}, {RDI, dst}, {RCX, 0}},
                         .flags = SF | OF,
                         .mem = {{src, 1}, {dst, 1}}});
        CHECK_FLAGS(r, kAll6, SF | OF);
        CHECK_HEX(r.reg(RSI), src);
        CHECK_HEX(r.reg(RDI), dst);
    }
}

TEST_CASE("SCAS", "[string]") {
    SECTION("scasb/scasw/scasd/scasq compare rAX with [rDI]") {
        auto r = run_ok(64, "scasb\nhlt",
                        {.regs = {{RAX, 0x1180}, {RDI, dst}}, .mem = {{dst, 0x01, 1}}});
        CHECK_FLAGS(r, kAll6, OF | AF);  // AL - [rDI] = 0x80 - 0x01 = 0x7F: -128 - 1 overflows
        CHECK_HEX(r.reg(RDI), dst + 1);
        auto s = run_ok(64, "scasq\nhlt",
                        {.regs = {{RAX, 5}, {RDI, dst}}, .flags = DF, .mem = {{dst, 5}}});
        CHECK_FLAGS(s, kAll6, ZF | PF);
        CHECK_HEX(s.reg(RDI), dst - 8);
    }
    SECTION("repne scasb finds a terminator") {
        auto r = run_ok(64, "repne scasb\nhlt",
                        {.regs = {{RAX, 0}, {RDI, dst}, {RCX, ~0ull}},
                         .bytes = {text(dst, std::string("hello\0", 6))}});
        CHECK_HEX(r.reg(RCX), ~0ull - 6);
        CHECK_HEX(r.reg(RDI), dst + 6);
        CHECK_FLAGS(r, ZF, ZF);
    }
    SECTION("repe scasb stops at the first different byte") {
        auto r =
            run_ok(64, "repe scasb\nhlt",
                   {.regs = {{RAX, 'a'}, {RDI, dst}, {RCX, 10}}, .bytes = {text(dst, "aaaab")}});
        CHECK_HEX(r.reg(RCX), 5);
        CHECK_HEX(r.reg(RDI), dst + 5);
        CHECK_FLAGS(r, kAll6, CF | SF | AF | PF);  // 'a' - 'b' = 0xFF
    }
    SECTION("repne scasd runs out of count") {
        auto r =
            run_ok(64, "repne scasd\nhlt",
                   {.regs = {{RAX, 7}, {RDI, dst}, {RCX, 2}}, .mem = {{dst, 0x0000000800000009}}});
        CHECK_HEX(r.reg(RCX), 0);
        CHECK_HEX(r.reg(RDI), dst + 8);
        CHECK_FLAGS(r, kAll6, CF | SF | AF | PF);  // last: 7 - 8 = 0xFFFFFFFF
    }
}

TEST_CASE("String instructions with 32-bit addressing (67) in 64-bit mode", "[string]") {
    // ESI, EDI and ECX are used and written as 32-bit registers (zero-extended).
    SECTION("a32 rep movsb") {
        auto r = run_ok(64, "a32 rep movsb\nhlt",
                        {.regs = {{RCX, 0xFFFFFFFF00000002},
                                  {RSI, 0xABCD000000000000 | src},
                                  {RDI, 0x1234000000000000 | dst}},
                         .mem = {{src, kPattern}, {dst, kFill}}});
        CHECK_HEX(mem64(r, dst), 0xEEEEEEEEEEEE0201);
        CHECK_HEX(r.reg(RCX), 0);
        CHECK_HEX(r.reg(RSI), src + 2);
        CHECK_HEX(r.reg(RDI), dst + 2);
    }
    SECTION("a32 stosb wraps EDI at 4 GiB") {
        auto r = run_ok(
            64, "a32 stosb\nhlt",
            {.regs = {{RAX, 0x5A}, {RDI, 0x1234567800000000}}, .flags = DF, .mem = {{0, 0}}});
        CHECK_HEX(mem8(r, 0), 0x5A);
        CHECK_HEX(r.reg(RDI), 0xFFFFFFFF);
    }
    SECTION("a32 repne scasb counts in ECX") {
        auto r = run_ok(64, "a32 repne scasb\nhlt",
                        {.regs = {{RAX, 'c'}, {RDI, dst}, {RCX, 0x1111111100000010}},
                         .bytes = {text(dst, "abc")}});
        CHECK_HEX(r.reg(RCX), 0xD);
        CHECK_HEX(r.reg(RDI), dst + 3);
    }
}

TEST_CASE("String instructions in 32-bit code", "[string]") {
    auto r =
        run_ok(32, "rep stosd\nmov edi, 0x20100\nmov al, 0x77\nmov ecx, 0x20\nrepne scasb\nhlt",
               {.regs = {{RAX, 0x77}, {RDI, dst}, {RCX, 2}}, .mem = {{dst + 8, kFill}}});
    CHECK_HEX(mem64(r, dst), 0x0000007700000077);
    CHECK_HEX(r.reg(RCX) & 0xFFFFFFFF, 0x1F);
    CHECK_HEX(r.reg(RDI) & 0xFFFFFFFF, dst + 1);
}

TEST_CASE("String instructions in 16-bit code: SI/DI/CX wrap at 0xFFFF", "[string]") {
    SECTION("rep movsb across SI = 0xFFFF; bits 31:16 of ESI/ECX are kept") {
        auto r = run_ok(16, "rep movsb\nhlt",
                        {.regs = {{RSI, 0x1230FFFE}, {RDI, 0x8000}, {RCX, 0xABCD0003}},
                         .mem = {{0xFFFE, 0xBBAA, 2}, {0x0000, 0xCC, 1}, {0x8000, 0}}});
        CHECK_HEX(mem64(r, 0x8000), 0xCCBBAA);
        CHECK_HEX(r.reg(RSI) & 0xFFFFFFFF, 0x12300001);
        CHECK_HEX(r.reg(RDI) & 0xFFFFFFFF, 0x8003);
        CHECK_HEX(r.reg(RCX) & 0xFFFFFFFF, 0xABCD0000);
    }
    SECTION("rep stosw across DI = 0xFFFE") {
        auto r = run_ok(
            16, "rep stosw\nhlt",
            {.regs = {{RAX, 0x1234}, {RDI, 0xFFFE}, {RCX, 2}}, .mem = {{0xFFFC, 0}, {0x0000, 0}}});
        CHECK_HEX(mem16(r, 0xFFFE), 0x1234);
        CHECK_HEX(mem16(r, 0x0000), 0x1234);
        CHECK_HEX(r.reg(RDI) & 0xFFFF, 0x0002);
    }
    SECTION("word and dword forms (A5, 66 A5, AD, AB, A7, AF) in 16-bit code") {
        auto r = run_ok(16, R"(
            movsw
            movsd
            lodsw
            stosd
            cmpsw
            scasw
            hlt)",
                        {.regs = {{RSI, 0x8000}, {RDI, 0x9000}, {RAX, 0xAAAAAAAA}},
                         .mem = {{0x8000, 0x4444333322221111},
                                 {0x8008, 0x6666666655555555},
                                 {0x9000, 0},
                                 {0x9008, kFill}}});
        // movsw: 9000 <- 1111; movsd: 9002 <- 33332222; lodsw: AX = 4444 (SI 8006 -> 8008);
        // stosd: 9006 <- AAAA4444; cmpsw: [8008] 5555 - [900A] AAAA; scasw: AX 4444 - [900C] EEEE.
        CHECK_HEX(mem64(r, 0x9000), 0x4444333322221111);
        CHECK_HEX(mem64(r, 0x9008), 0xEEEEEEEEEEEEAAAA);
        CHECK_HEX(r.reg(RAX) & 0xFFFFFFFF, 0xAAAA4444);
        CHECK_HEX(r.reg(RSI) & 0xFFFF, 0x800A);
        CHECK_HEX(r.reg(RDI) & 0xFFFF, 0x900E);
        CHECK_FLAGS(r, kAll6, CF | AF | PF);  // 0x4444 - 0xEEEE = 0x5556: borrow, 4 - E borrows
    }
    SECTION("lodsb with DF=1 wraps SI downward") {
        auto r = run_ok(16, "lodsb\nhlt",
                        {.regs = {{RSI, 0x0000}}, .flags = DF, .mem = {{0x0000, 0x99, 1}}});
        CHECK_HEX(r.reg(RAX) & 0xFF, 0x99);
        CHECK_HEX(r.reg(RSI) & 0xFFFFFFFF, 0xFFFF);
    }
}
