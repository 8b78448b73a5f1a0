// Shared helpers for the per-family instruction unit tests (tests/test_<family>.cpp).
//
// Each test runs a short NASM snippet (ending in HLT) on a fresh Machine with
// registers, RFLAGS and memory preset from an Init, then checks exact register,
// memory and flag values. Expected values are worked out from the Intel SDM, never
// taken from pmusim's output. Flags the SDM leaves undefined are masked out of the
// checks; pmusim's documented choices for them (docs/semantics/integer.md) are
// checked only in test cases tagged [documented-choice].
#pragma once
#include <catch2/catch.hpp>

// Designated initializers of Init leave the other members defaulted on purpose.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/asm_harness.h"

namespace pmusim::unit {

using namespace pmusim::test;

/// A value printed in hex by Catch.
struct Hex {
    u64 v;
    bool operator==(const Hex&) const = default;
};
/// A set of RFLAGS bits, printed by name.
struct Flags {
    u64 v;
    bool operator==(const Flags&) const = default;
};

/// The six arithmetic flags plus DF, for convenience in tables.
constexpr u64 CF = kCF, PF = kPF, AF = kAF, ZF = kZF, SF = kSF, OF = kOF, DF = kDF;
constexpr u64 kAll6 = kArithFlags;

struct MemInit {
    u64 addr;
    u64 value;
    unsigned size = 8;
};

/// Machine state to establish before the snippet runs.
struct Init {
    std::vector<std::pair<Gpr, u64>>
        regs;                  ///< register values; others are 0 (RSP as in machine_with)
    u64 flags = 0;             ///< RFLAGS bits set before the run (bit 1 is added)
    std::vector<MemInit> mem;  ///< little-endian values stored in RAM
    std::vector<std::pair<u64, std::vector<u8>>> bytes;  ///< raw bytes stored in RAM
    std::function<void(Machine&)> setup;                 ///< anything else
    u64 max = 100000;                                    ///< instruction limit
};

/// Runs `src` as `bits`-bit code after applying `init`. Does not check how the run ended.
inline AsmResult exec(int bits, const std::string& src, const Init& init = {}) {
    AsmResult r{machine_with(bits, src), {}};
    Cpu& c = r.cpu();
    for (u8 g = RAX; g <= R15; ++g)  // every register a test does not set starts at 0
        if (g != RSP) c.gpr[g] = 0;
    for (auto [g, v] : init.regs) c.gpr[g] = v;
    c.set_rflags(init.flags | kFixed1);
    for (const MemInit& m : init.mem) r.machine->load(m.addr, &m.value, m.size);
    for (const auto& [a, b] : init.bytes) r.machine->load(a, b.data(), b.size());
    if (init.setup) init.setup(*r.machine);
    r.run = r.machine->run(RunLimits{init.max});
    return r;
}

inline std::string describe_stop(const AsmResult& r) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "stop=%s rip=%#llx fault vector=%d",
                  stop_reason_name(r.run.reason), (unsigned long long)r.run.rip,
                  r.run.fault ? int(r.run.fault->vector) : -1);
    return buf;
}

/// Runs `src` and requires that it ends at its HLT.
inline AsmResult run_ok(int bits, const std::string& src, const Init& init = {}) {
    AsmResult r = exec(bits, src, init);
    INFO(describe_stop(r));
    REQUIRE(r.run.reason == StopReason::kHalt);
    return r;
}

/// Runs `src` and requires that it stops with exception `vector` at `rip`.
inline AsmResult run_fault(int bits, const std::string& src, u8 vector, u64 rip,
                           const Init& init = {}) {
    AsmResult r = exec(bits, src, init);
    INFO(describe_stop(r));
    REQUIRE(r.run.reason == StopReason::kException);
    REQUIRE(r.run.fault.has_value());
    CHECK(int(r.run.fault->vector) == int(vector));
    CHECK(Hex{r.run.rip} == Hex{rip});
    CHECK(Hex{r.cpu().rip} == Hex{rip});
    return r;
}

/// Little-endian memory reads (physical = linear in these tests).
inline u64 mem(AsmResult& r, u64 addr, unsigned size) {
    u64 v = 0;
    r.machine->peek(addr, &v, size);
    return v;
}
inline u64 mem8(AsmResult& r, u64 a) { return mem(r, a, 1); }
inline u64 mem16(AsmResult& r, u64 a) { return mem(r, a, 2); }
inline u64 mem32(AsmResult& r, u64 a) { return mem(r, a, 4); }
inline u64 mem64(AsmResult& r, u64 a) { return mem(r, a, 8); }

inline u64 rflags(AsmResult& r) { return r.cpu().rflags(); }

/// Mask of an operand size in bytes.
constexpr u64 size_mask(unsigned bytes) { return bytes == 8 ? ~0ull : (1ull << (8 * bytes)) - 1; }

/// Register names by operand size (1, 2, 4, 8) for RAX..RDX-style registers.
inline const char* reg_name(Gpr g, unsigned size) {
    static const char* const n[4][4] = {{"al", "cl", "dl", "bl"},
                                        {"ax", "cx", "dx", "bx"},
                                        {"eax", "ecx", "edx", "ebx"},
                                        {"rax", "rcx", "rdx", "rbx"}};
    const int k = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;
    return n[k][g];
}
inline const char* size_keyword(unsigned size) {
    return size == 1 ? "byte" : size == 2 ? "word" : size == 4 ? "dword" : "qword";
}

/// The value a register holds after an instruction writes `result` with operand size
/// `size` over `before` in 64-bit mode (SDM Vol. 1, 3.4.1.1: 32-bit results
/// zero-extend, 8/16-bit results leave the other bits unchanged).
constexpr u64 merged(u64 before, u64 result, unsigned size) {
    if (size == 4) return result & 0xFFFFFFFFull;
    return (before & ~size_mask(size)) | (result & size_mask(size));
}

/// The 16 condition codes in encoding order with the SDM's definitions
/// (SDM Vol. 1, Appendix B, Table B-1).
struct CondInfo {
    const char* name;
    bool (*holds)(u64 flags);
};
inline bool fl(u64 f, u64 bit) { return (f & bit) != 0; }
inline const CondInfo kConds[16] = {
    {"o", [](u64 f) { return fl(f, OF); }},
    {"no", [](u64 f) { return !fl(f, OF); }},
    {"b", [](u64 f) { return fl(f, CF); }},
    {"ae", [](u64 f) { return !fl(f, CF); }},
    {"e", [](u64 f) { return fl(f, ZF); }},
    {"ne", [](u64 f) { return !fl(f, ZF); }},
    {"be", [](u64 f) { return fl(f, CF) || fl(f, ZF); }},
    {"a", [](u64 f) { return !fl(f, CF) && !fl(f, ZF); }},
    {"s", [](u64 f) { return fl(f, SF); }},
    {"ns", [](u64 f) { return !fl(f, SF); }},
    {"p", [](u64 f) { return fl(f, PF); }},
    {"np", [](u64 f) { return !fl(f, PF); }},
    {"l", [](u64 f) { return fl(f, SF) != fl(f, OF); }},
    {"ge", [](u64 f) { return fl(f, SF) == fl(f, OF); }},
    {"le", [](u64 f) { return fl(f, ZF) || fl(f, SF) != fl(f, OF); }},
    {"g", [](u64 f) { return !fl(f, ZF) && fl(f, SF) == fl(f, OF); }},
};
/// Flag states that make every condition both true and false at least once.
inline const u64 kCondStates[] = {0,       CF,      ZF,      SF,      OF,           PF,
                                  SF | OF, CF | ZF, ZF | SF, ZF | OF, SF | OF | ZF, kAll6};

}  // namespace pmusim::unit

namespace Catch {
template <>
struct StringMaker<pmusim::unit::Hex> {
    static std::string convert(const pmusim::unit::Hex& h) {
        char buf[24];
        std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)h.v);
        return buf;
    }
};
template <>
struct StringMaker<pmusim::unit::Flags> {
    static std::string convert(const pmusim::unit::Flags& f) {
        static const std::pair<pmusim::u64, const char*> names[] = {
            {pmusim::kCF, "CF"}, {pmusim::kPF, "PF"},   {pmusim::kAF, "AF"},
            {pmusim::kZF, "ZF"}, {pmusim::kSF, "SF"},   {pmusim::kTF, "TF"},
            {pmusim::kIF, "IF"}, {pmusim::kDF, "DF"},   {pmusim::kOF, "OF"},
            {pmusim::kNT, "NT"}, {pmusim::kRF, "RF"},   {pmusim::kVM, "VM"},
            {pmusim::kAC, "AC"}, {pmusim::kVIF, "VIF"}, {pmusim::kVIP, "VIP"},
            {pmusim::kID, "ID"}, {pmusim::kFixed1, "1"}};
        std::string s = "{";
        pmusim::u64 rest = f.v;
        for (auto [bit, name] : names) {
            if (f.v & bit) {
                s += s.size() > 1 ? " " : "";
                s += name;
                rest &= ~bit;
            }
        }
        if (f.v & pmusim::kIOPL) {
            s += " IOPL=" + std::to_string((f.v >> 12) & 3);
            rest &= ~pmusim::kIOPL;
        }
        if (rest) {
            char buf[32];
            std::snprintf(buf, sizeof buf, " other=%#llx", (unsigned long long)rest);
            s += buf;
        }
        return s + "}";
    }
};
}  // namespace Catch

/// CHECK that two values are equal, printing both in hex.
#define CHECK_HEX(actual, expected)                     \
    CHECK(::pmusim::unit::Hex{::pmusim::u64(actual)} == \
          ::pmusim::unit::Hex{::pmusim::u64(expected)})
/// CHECK the RFLAGS bits in `mask` against `expected` (bits outside `mask` ignored).
#define CHECK_FLAGS(r, mask, expected)                                              \
    CHECK(::pmusim::unit::Flags{::pmusim::unit::rflags(r) & ::pmusim::u64(mask)} == \
          ::pmusim::unit::Flags{::pmusim::u64(expected) & ::pmusim::u64(mask)})
