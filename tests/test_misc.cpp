// CLC STC CMC CLD STD, the NOP family, PAUSE, ENDBR, DAA DAS AAA AAS AAM AAD, UD2,
// LOCK misuse, and instructions pmusim does not implement (SDM Vol. 2 instruction pages).
#include <algorithm>

#include "tests/unit_common.h"

using namespace pmusim;
using namespace pmusim::unit;

namespace {
constexpr u64 kBcdFlags = CF | AF | SF | ZF | PF;  // defined after DAA/DAS (OF undefined)
}  // namespace

TEST_CASE("CLC STC CMC CLD STD change only their flag", "[misc]") {
    struct Case {
        const char* insn;
        u64 in, out;
    };
    const u64 rest = PF | AF | ZF | SF | OF;
    const Case cases[] = {
        {"clc", rest | CF, rest},
        {"stc", rest, rest | CF},
        {"cmc", rest, rest | CF},
        {"cmc", rest | CF, rest},
        {"std", rest | CF, rest | CF | DF},
        {"cld", rest | DF, rest},
        {"clc", 0, 0},
        {"std", DF, DF},
    };
    for (const Case& c : cases) {
        for (int bits : {64, 32, 16}) {
            INFO(bits << "-bit " << c.insn);
            auto r = run_ok(bits, std::string(c.insn) + "\nhlt", {.flags = c.in});
            CHECK_FLAGS(r, ~0ull, c.out | kFixed1);
        }
    }
}

TEST_CASE("NOP forms do nothing, and 0F 1F /0 does not access its memory operand", "[misc]") {
    // SDM NOP: "The multi-byte form of NOP is available ... The memory operand is not
    // accessed" (0F 1F /0 takes a ModR/M operand only to encode its length).
    const u64 noncanonical = 0x8000000000000000;
    auto r = run_ok(64, R"(
        nop
        db 0x66, 0x90                                  ; xchg ax, ax = NOP
        nop dword [rax]                                ; 0F 1F 00
        db 0x0F, 0x1F, 0x40, 0x00                      ; nop dword [rax+0]
        db 0x0F, 0x1F, 0x84, 0x00, 0, 0, 0, 0          ; nop dword [rax+rax*1+0]
        db 0x66, 0x0F, 0x1F, 0x44, 0x00, 0x00          ; nop word [rax+rax*1+0]
        db 0x66, 0x2E, 0x0F, 0x1F, 0x84, 0, 0, 0, 0, 0 ; nop word cs:[rax+rax*1+0]
        nop qword [rbx+0x7FFFFFFF]
        hlt)",
                    {.regs = {{RAX, noncanonical}, {RBX, 0x7FFFFFFF0000}}, .flags = CF | ZF});
    CHECK(r.run.instructions == 9);
    CHECK_HEX(r.reg(RAX), noncanonical);
    CHECK_HEX(r.reg(RBX), 0x7FFFFFFF0000);
    CHECK_FLAGS(r, ~0ull, CF | ZF | kFixed1);
    auto s = run_ok(32, "nop dword [eax]\nnop word [eax+ebx*8]\nhlt",
                    {.regs = {{RAX, 0xFFFFFFF0}, {RBX, 0x1FFFFFFF}}});
    CHECK(s.run.instructions == 3);
}

TEST_CASE("NOP with a register operand (0F 1F /0, mod = 11) is a NOP", "[misc]") {
    // SDM NOP: "0F 1F /0  NOP r/m16" and "NOP r/m32": the register forms are valid too.
    auto r = run_ok(64, R"(
        db 0x0F, 0x1F, 0xC0          ; nop eax
        db 0x66, 0x0F, 0x1F, 0xC1    ; nop cx
        db 0x48, 0x0F, 0x1F, 0xC0    ; nop rax
        hlt)",
                    {.regs = {{RAX, 0xFFFFFFFF00000005}, {RCX, 7}}, .flags = SF});
    CHECK(r.run.instructions == 4);
    CHECK_HEX(r.reg(RAX), 0xFFFFFFFF00000005);  // a NOP writes nothing, not even a zero-extension
    CHECK_FLAGS(r, ~0ull, SF | kFixed1);
    auto s = run_ok(32, "db 0x0F, 0x1F, 0xC3\nhlt");  // nop ebx
    CHECK(s.run.instructions == 2);
}

TEST_CASE("PAUSE, ENDBR64, ENDBR32 have no architectural effect", "[misc]") {
    auto r = run_ok(64, "pause\nendbr64\nendbr32\nhlt", {.regs = {{RAX, 5}}, .flags = kAll6});
    CHECK(r.run.instructions == 4);
    CHECK_HEX(r.reg(RAX), 5);
    CHECK_FLAGS(r, ~0ull, kAll6 | kFixed1);
    auto s = run_ok(32, "pause\nendbr32\nhlt");
    CHECK(s.run.instructions == 3);
}

TEST_CASE("DAA and DAS in 32-bit code", "[misc][bcd]") {
    // SDM DAA/DAS, Operation. OF is undefined; CF AF SF ZF PF are defined.
    struct Case {
        const char* code;
        u64 eax, flags_in;
        u64 eax_out, flags_out;
    };
    const Case cases[] = {
        {"add al, 0x35\ndaa", 0x79, 0, 0x14, CF | AF | PF},       // 79 + 35 = 114 (SDM DAA example)
        {"add al, 0x01\ndaa", 0x09, 0, 0x10, AF},                 // 09 + 01 = 10
        {"add al, 0x01\ndaa", 0x99, 0, 0x00, CF | AF | ZF | PF},  // 99 + 01 = 100
        {"add al, 0x11\ndaa", 0x22, 0, 0x33, PF},                 // no adjustment
        {"daa", 0x00, CF, 0x60, CF | PF},                         // CF alone forces +60h
        {"sub al, 0x47\ndas", 0x35, 0, 0x88,
         CF | AF | SF | PF},  // 35 - 47 = -12 -> 88 borrow (SDM DAS example)
        {"sub al, 0x01\ndas", 0x10, 0, 0x09, AF | PF},  // 10 - 01 = 09
        {"das", 0x03, AF, 0xFD, CF | AF | SF},          // AL - 6 borrows: CF = 1
        {"sub al, 0x11\ndas", 0x33, 0, 0x22, PF},       // no adjustment
    };
    for (const Case& c : cases) {
        INFO(c.code << std::hex << "  eax=" << c.eax);
        auto r = run_ok(32, std::string(c.code) + "\nhlt",
                        {.regs = {{RAX, 0x12345600 | c.eax}}, .flags = c.flags_in});
        CHECK_HEX(r.reg(RAX) & 0xFFFFFFFF, 0x12345600 | c.eax_out);
        CHECK_FLAGS(r, kBcdFlags, c.flags_out);
    }
}

TEST_CASE("AAA and AAS in 32-bit code", "[misc][bcd]") {
    // SDM AAA: if (AL AND 0FH) > 9 or AF: AX = AX + 106H, AF = CF = 1; else AF = CF = 0;
    // then AL = AL AND 0FH. SDM AAS: if (AL AND 0FH) > 9 or AF: AX = AX - 6, AH = AH - 1,
    // AF = CF = 1; else AF = CF = 0; then AL = AL AND 0FH. Only AF and CF are defined.
    struct Case {
        const char* code;
        u64 eax, flags_in;
        u64 eax_out;
        bool adjust;
    };
    const Case cases[] = {
        {"add al, bl\naaa", 0x0038, 0, 0x0103, true},  // '8' + '5' = 0x6D -> unpacked 13
        {"aaa", 0x00FA, 0, 0x0200, true},              // AX + 106H carries into AH
        {"aaa", 0x0535, 0, 0x0505, false},
        {"aaa", 0x0702, AF, 0x0808, true},            // AF alone triggers the adjustment
        {"sub al, 8\naas", 0x0203, 0, 0x0105, true},  // 23 - 8 = 15
        {"aas", 0x0535, 0, 0x0505, false},
        {"aas", 0x020F, 0, 0x0109, true},
        // AL < 6 with AF = 1: AX - 6 borrows from AH, and AH is decremented again.
        {"aas", 0x0205, AF, 0x000F, true},
        {"aas", 0x0203, AF, 0x000D, true},
        {"aas", 0x0100, AF, 0xFF0A, true},
    };
    for (const Case& c : cases) {
        INFO(c.code << std::hex << "  ax=" << c.eax << " flags_in=" << c.flags_in);
        auto r = run_ok(32, std::string(c.code) + "\nhlt",
                        {.regs = {{RAX, 0x12340000 | c.eax}, {RBX, 0x35}}, .flags = c.flags_in});
        CHECK_HEX(r.reg(RAX) & 0xFFFFFFFF, 0x12340000 | c.eax_out);
        CHECK_FLAGS(r, CF | AF, c.adjust ? CF | AF : 0);
    }
}

TEST_CASE("AAM and AAD in 32-bit code", "[misc][bcd]") {
    // SDM AAM imm8: AH = AL / imm8, AL = AL mod imm8; AAD imm8: AL = (AL + AH * imm8) & FFH,
    // AH = 0. SF ZF PF from AL; OF AF CF undefined. AAM with imm8 = 0 raises #DE.
    struct Case {
        const char* code;
        u64 eax;
        u64 eax_out, flags_out;
    };
    const Case cases[] = {
        {"aam", 0x12340000 | 0x4F, 0x12340709, PF},
        {"db 0xD4, 0x10", 0x000000AB, 0x00000A0B, 0},  // AAM 16
        {"aam", 0x00000000, 0x00000000, ZF | PF},
        {"aad", 0x12340709, 0x1234004F, 0},
        {"db 0xD5, 0x10", 0x00000A0B, 0x000000AB, SF},  // AAD 16
        {"aad", 0x0000FFFF, 0x000000F5, SF | PF},       // (0xFF + 0xFF * 10) mod 256
    };
    for (const Case& c : cases) {
        INFO(c.code << std::hex << "  eax=" << c.eax);
        auto r = run_ok(32, std::string(c.code) + "\nhlt", {.regs = {{RAX, c.eax}}});
        CHECK_HEX(r.reg(RAX) & 0xFFFFFFFF, c.eax_out);
        CHECK_FLAGS(r, SF | ZF | PF, c.flags_out);
    }
    SECTION("AAM 0 raises #DE") {
        auto r = run_fault(32, "nop\ndb 0xD4, 0x00\nhlt", vec::DE, kCodeBase + 1,
                           {.regs = {{RAX, 0x55}}});
        CHECK_HEX(r.reg(RAX) & 0xFFFF, 0x55);
    }
}

TEST_CASE("BCD adjustments are invalid in 64-bit mode", "[misc][bcd]") {
    for (const char* bytes : {"0x27", "0x2F", "0x37", "0x3F", "0xD4, 0x0A", "0xD5, 0x0A"}) {
        INFO(bytes);
        run_fault(64, std::string("db ") + bytes + "\nhlt", vec::UD, kCodeBase,
                  {.regs = {{RAX, 0x99}}});
    }
}

TEST_CASE("UD2 raises #UD at the instruction", "[misc]") {
    for (int bits : {64, 32, 16}) {
        INFO(bits);
        auto r = run_fault(bits, "nop\nud2\nhlt", vec::UD, kCodeBase + 1);
        CHECK(r.run.instructions == 1);
        CHECK_FALSE(r.run.fault->has_error_code);
    }
}

TEST_CASE("LOCK with a register destination or on a non-lockable instruction raises #UD",
          "[misc]") {
    // SDM LOCK: "#UD ... if the LOCK prefix is used with an instruction not listed, or the
    // destination operand is not a memory operand".
    for (const char* bytes : {"0xF0, 0x01, 0xC3",        // lock add ebx, eax
                              "0xF0, 0x0F, 0xAB, 0xC3",  // lock bts ebx, eax
                              "0xF0, 0x87, 0xC3",        // lock xchg ebx, eax
                              "0xF0, 0x8B, 0x03",        // lock mov eax, [rbx]
                              "0xF0, 0x3B, 0x03",  // lock cmp eax, [rbx] (CMP is not lockable)
                              "0xF0, 0x90"}) {     // lock nop
        INFO(bytes);
        auto r = run_fault(64, std::string("db ") + bytes + "\nhlt", vec::UD, kCodeBase,
                           {.regs = {{RAX, 1}, {RBX, kDataBase}}});
        CHECK_HEX(r.reg(RBX), kDataBase);
    }
}

TEST_CASE("An unimplemented instruction raises #UD and is counted", "[misc]") {
    // RDRAND is a valid instruction pmusim does not model: it must raise #UD (RIP at the
    // instruction) and be counted under its mnemonic in Cpu::missing.
    auto r = run_fault(64, "nop\nrdrand eax\nhlt", vec::UD, kCodeBase + 1);
    const auto& names = r.cpu().missing.names;
    const auto it = std::find(names.begin(), names.end(), "rdrand");
    REQUIRE(it != names.end());
    const size_t k = size_t(it - names.begin());
    CHECK(r.cpu().missing.executions.at(k) == 1);
    // Running again retries the instruction: it faults and is counted again.
    const RunResult again = r.machine->run(RunLimits{10});
    CHECK(again.reason == StopReason::kException);
    CHECK_HEX(again.rip, kCodeBase + 1);
    CHECK(r.cpu().missing.executions.at(k) == 2);
}

TEST_CASE("Miscellaneous documented choices for undefined flags", "[misc][documented-choice]") {
    // docs/semantics/integer.md: DAA/DAS clear OF; AAA/AAS set SF ZF PF from the new AL and
    // clear OF; AAM/AAD clear OF AF CF.
    SECTION("DAA/DAS clear OF") {
        auto r = run_ok(32, "mov al, 0x7F\nadd al, 1\ndaa\nhlt");  // ADD sets OF; DAA: 0x80 -> 0x86
        CHECK_HEX(r.reg(RAX) & 0xFF, 0x86);
        CHECK_FLAGS(r, OF, 0);
        auto s = run_ok(32, "das\nhlt", {.regs = {{RAX, 0x80}}, .flags = OF | CF});
        CHECK_FLAGS(s, OF, 0);
    }
    SECTION("AAA/AAS: SF ZF PF from AL, OF cleared") {
        auto r = run_ok(32, "aaa\nhlt", {.regs = {{RAX, 0x000A}}, .flags = OF | SF});
        CHECK_HEX(r.reg(RAX) & 0xFFFF, 0x0100);
        CHECK_FLAGS(r, kAll6, CF | AF | ZF | PF);
        auto s = run_ok(32, "aas\nhlt", {.regs = {{RAX, 0x0507}}, .flags = OF | ZF});
        CHECK_FLAGS(s, kAll6, 0);  // AL = 0x07: three bits set, PF = 0
    }
    SECTION("AAM/AAD clear OF AF CF") {
        auto r = run_ok(32, "aad\nhlt", {.regs = {{RAX, 0xFFFF}}, .flags = OF | AF | CF});
        CHECK_FLAGS(r, OF | AF | CF, 0);
        auto s = run_ok(32, "aam\nhlt", {.regs = {{RAX, 0x63}}, .flags = OF | AF | CF});
        CHECK_FLAGS(s, OF | AF | CF, 0);
    }
}
