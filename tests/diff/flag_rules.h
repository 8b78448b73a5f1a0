// Per-mnemonic arithmetic-flag effects, from the "Flags Affected" section of each
// instruction page in the Intel SDM Vol. 2 (order of the pages: 2A A-L, 2B M-U).
// The generator tracks which flags are defined after every instruction; flags an
// instruction leaves undefined are masked out of the comparison until an instruction
// defines them again, and flag-reading instructions are only generated once the
// flags they read are defined. Flags not listed as defined or undefined are unaffected.
#pragma once
#include "tests/diff/diff_common.h"

namespace diff {

enum class Mn : u8 {
    ADD, ADC, SUB, SBB, CMP, NEG, XADD, CMPXCHG, CMPS, SCAS,
    AND, OR, XOR, TEST, INC, DEC, MUL, IMUL, DIV, IDIV,
    SHL, SHR, SAR, ROL, ROR, RCL, RCR, SHLD, SHRD,
    BT, BTS, BTR, BTC, BSF, BSR, TZCNT, LZCNT, POPCNT,
    CMPXCHG8B, SAHF, POPF, CLC, STC, CMC,
    kCount
};

struct FlagRule {
    Mn mn;
    const char* name;
    u32 defined;    ///< written with an architecturally defined value
    u32 undefined;  ///< written with an undefined value
    const char* sdm;  ///< the SDM page and its wording
};

constexpr u32 kSZP = kSF | kZF | kPF;
constexpr u32 kOSZAPC = kArith;

// clang-format off
inline constexpr FlagRule kFlagRules[] = {
    {Mn::ADD, "ADD", kOSZAPC, 0, "Vol. 2A ADD: OF SF ZF AF CF PF set according to the result"},
    {Mn::ADC, "ADC", kOSZAPC, 0, "Vol. 2A ADC: OF SF ZF AF CF PF set according to the result"},
    {Mn::SUB, "SUB", kOSZAPC, 0, "Vol. 2B SUB: OF SF ZF AF PF CF set according to the result"},
    {Mn::SBB, "SBB", kOSZAPC, 0, "Vol. 2B SBB: OF SF ZF AF PF CF set according to the result"},
    {Mn::CMP, "CMP", kOSZAPC, 0, "Vol. 2A CMP: CF OF SF ZF AF PF set according to the result"},
    {Mn::NEG, "NEG", kOSZAPC, 0, "Vol. 2B NEG: CF = (source != 0); OF SF ZF AF PF per the result"},
    {Mn::XADD, "XADD", kOSZAPC, 0, "Vol. 2B XADD: CF PF AF SF ZF OF as for ADD"},
    {Mn::CMPXCHG, "CMPXCHG", kOSZAPC, 0, "Vol. 2A CMPXCHG: ZF per the compare; CF PF AF SF OF as for CMP"},
    {Mn::CMPS, "CMPS", kOSZAPC, 0, "Vol. 2A CMPS/CMPSB/CMPSW/CMPSD/CMPSQ: CF OF SF ZF AF PF per the temporary result"},
    {Mn::SCAS, "SCAS", kOSZAPC, 0, "Vol. 2B SCAS/SCASB/SCASW/SCASD: OF SF ZF AF PF CF per the temporary result"},
    {Mn::AND, "AND", kCF | kOF | kSZP, kAF, "Vol. 2A AND: OF CF cleared; SF ZF PF per the result; AF undefined"},
    {Mn::OR, "OR", kCF | kOF | kSZP, kAF, "Vol. 2B OR: OF CF cleared; SF ZF PF per the result; AF undefined"},
    {Mn::XOR, "XOR", kCF | kOF | kSZP, kAF, "Vol. 2B XOR: OF CF cleared; SF ZF PF per the result; AF undefined"},
    {Mn::TEST, "TEST", kCF | kOF | kSZP, kAF, "Vol. 2B TEST: OF CF cleared; SF ZF PF per the result; AF undefined"},
    {Mn::INC, "INC", kOF | kSZP | kAF, 0, "Vol. 2A INC: CF not affected; OF SF ZF AF PF per the result"},
    {Mn::DEC, "DEC", kOF | kSZP | kAF, 0, "Vol. 2A DEC: CF not affected; OF SF ZF AF PF per the result"},
    {Mn::MUL, "MUL", kCF | kOF, kSZP | kAF, "Vol. 2B MUL: OF CF = upper half non-zero; SF ZF AF PF undefined"},
    {Mn::IMUL, "IMUL", kCF | kOF, kSZP | kAF, "Vol. 2A IMUL: CF OF = significant bits lost; SF ZF AF PF undefined"},
    {Mn::DIV, "DIV", 0, kOSZAPC, "Vol. 2A DIV: CF OF SF ZF AF PF undefined"},
    {Mn::IDIV, "IDIV", 0, kOSZAPC, "Vol. 2A IDIV: CF OF SF ZF AF PF undefined"},
    // Shifts and rotates: the entries give the non-zero-count case; shift_rule()
    // applies the count-dependent parts of the same pages.
    {Mn::SHL, "SHL", kCF | kOF | kSZP, kAF, "Vol. 2B SAL/SAR/SHL/SHR: count 0 affects no flags; AF undefined; OF only for 1-bit shifts; CF undefined for SHL/SHR when count >= operand size"},
    {Mn::SHR, "SHR", kCF | kOF | kSZP, kAF, "Vol. 2B SAL/SAR/SHL/SHR (as SHL)"},
    {Mn::SAR, "SAR", kCF | kOF | kSZP, kAF, "Vol. 2B SAL/SAR/SHL/SHR (as SHL; CF defined for any count)"},
    {Mn::ROL, "ROL", kCF | kOF, 0, "Vol. 2B RCL/RCR/ROL/ROR: count 0 affects no flags; OF only for 1-bit rotates, else undefined; SF ZF AF PF unaffected"},
    {Mn::ROR, "ROR", kCF | kOF, 0, "Vol. 2B RCL/RCR/ROL/ROR (as ROL)"},
    {Mn::RCL, "RCL", kCF | kOF, 0, "Vol. 2B RCL/RCR/ROL/ROR (as ROL)"},
    {Mn::RCR, "RCR", kCF | kOF, 0, "Vol. 2B RCL/RCR/ROL/ROR (as ROL)"},
    {Mn::SHLD, "SHLD", kCF | kOF | kSZP, kAF, "Vol. 2B SHLD: count 0 affects no flags; OF only for 1-bit shifts; AF undefined; count > operand size: result and flags undefined"},
    {Mn::SHRD, "SHRD", kCF | kOF | kSZP, kAF, "Vol. 2B SHRD (as SHLD)"},
    {Mn::BT, "BT", kCF, kOF | kSF | kAF | kPF, "Vol. 2A BT: CF = the bit; ZF unaffected; OF SF AF PF undefined"},
    {Mn::BTS, "BTS", kCF, kOF | kSF | kAF | kPF, "Vol. 2A BTS (as BT)"},
    {Mn::BTR, "BTR", kCF, kOF | kSF | kAF | kPF, "Vol. 2A BTR (as BT)"},
    {Mn::BTC, "BTC", kCF, kOF | kSF | kAF | kPF, "Vol. 2A BTC (as BT)"},
    {Mn::BSF, "BSF", kZF, kCF | kOF | kSF | kAF | kPF, "Vol. 2A BSF: ZF = (source == 0); CF OF SF AF PF undefined; destination undefined for a zero source"},
    {Mn::BSR, "BSR", kZF, kCF | kOF | kSF | kAF | kPF, "Vol. 2A BSR (as BSF)"},
    {Mn::TZCNT, "TZCNT", kZF | kCF, kOF | kSF | kAF | kPF, "Vol. 2B TZCNT: ZF = (result == 0), CF = (source == 0); OF SF PF AF undefined"},
    {Mn::LZCNT, "LZCNT", kZF | kCF, kOF | kSF | kAF | kPF, "Vol. 2A LZCNT (as TZCNT)"},
    {Mn::POPCNT, "POPCNT", kOSZAPC, 0, "Vol. 2B POPCNT: OF SF ZF AF CF PF cleared, ZF = (source == 0)"},
    {Mn::CMPXCHG8B, "CMPXCHG8B", kZF, 0, "Vol. 2A CMPXCHG8B/CMPXCHG16B: ZF per the compare; CF PF AF SF OF unaffected"},
    {Mn::SAHF, "SAHF", kSF | kZF | kAF | kPF | kCF, 0, "Vol. 2B SAHF: SF ZF AF PF CF loaded from AH; OF unaffected"},
    {Mn::POPF, "POPF", kOSZAPC, 0, "Vol. 2B POPF: all flags loaded from the stack"},
    {Mn::CLC, "CLC", kCF, 0, "Vol. 2A CLC: CF cleared"},
    {Mn::STC, "STC", kCF, 0, "Vol. 2B STC: CF set"},
    {Mn::CMC, "CMC", kCF, 0, "Vol. 2A CMC: CF complemented"},
};
// clang-format on

inline const FlagRule& flag_rule(Mn mn) {
    static_assert(sizeof(kFlagRules) / sizeof(kFlagRules[0]) == size_t(Mn::kCount));
    return kFlagRules[size_t(mn)];
}

/// The effect of one executed instruction on flag definedness (and on a register
/// whose value the SDM leaves undefined, e.g. BSF's destination for a zero source).
struct Fx {
    u32 defined = 0;
    u32 undefined = 0;
    int undef_reg = -1;
    static Fx none() { return {}; }
    static Fx of(Mn mn) { return {flag_rule(mn).defined, flag_rule(mn).undefined, -1}; }
    u32 apply(u32 defined_before) const { return (defined_before & ~undefined) | defined; }
};

/// Shift/rotate effects for masked count `n` on a `w`-bit operand (the SDM pages
/// named in the table above). SHLD/SHRD counts above `w` are never generated.
inline Fx shift_rule(Mn mn, unsigned n, unsigned w) {
    if (n == 0) return Fx::none();  // "If the count is 0, the flags are not affected."
    Fx fx = Fx::of(mn);
    if (n != 1) {  // OF is defined only for 1-bit shifts and rotates.
        fx.defined &= ~kOF;
        fx.undefined |= kOF;
    }
    if ((mn == Mn::SHL || mn == Mn::SHR) && n >= w) {  // CF undefined: count >= operand size
        fx.defined &= ~kCF;
        fx.undefined |= kCF;
    }
    return fx;
}

/// Flags read by condition code `cc` (SDM Vol. 1, Appendix B, Table B-1).
inline u32 cond_reads(unsigned cc) {
    switch (cc >> 1) {
        case 0: return kOF;
        case 1: return kCF;
        case 2: return kZF;
        case 3: return kCF | kZF;
        case 4: return kSF;
        case 5: return kPF;
        case 6: return kSF | kOF;
        default: return kZF | kSF | kOF;
    }
}

}  // namespace diff
