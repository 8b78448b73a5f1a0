// String instructions MOVS STOS LODS CMPS SCAS with REP/REPE/REPNE, in every
// address size. SDM Vol. 2 (instruction pages, REP/REPE/REPZ/REPNE/REPNZ).
#include "isa/bind.h"

namespace pmusim {

namespace {

enum class Str : u8 { kMovs, kStos, kLods, kCmps, kScas };
enum Rep : u8 { kNoRep = 0, kRepAlways = 1, kRepE = 2, kRepNE = 3 };

/// One iteration of a string instruction. Registers are updated after the memory
/// accesses so a faulting iteration can be restarted (SDM Vol. 2, REP: "the
/// registers are updated ... the instruction can be restarted").
template <class T, Str S>
inline void iterate(Cpu& c, const Insn& i) {
    const u8 as = i.asize;
    const u64 m = kAddrMask[as];
    const u64 step = c.df() ? u64(-i64(sizeof(T))) : sizeof(T);
    const u64 si = c.gpr[RSI] & m, di = c.gpr[RDI] & m;
    if constexpr (S == Str::kMovs) {
        c.mmu.write<T>(linear(c, ES, di), c.mmu.read<T>(linear(c, i.seg, si)));
        set_index(c, RSI, si + step, as);
        set_index(c, RDI, di + step, as);
    } else if constexpr (S == Str::kStos) {
        c.mmu.write<T>(linear(c, ES, di), reg_get<T>(c, 0));
        set_index(c, RDI, di + step, as);
    } else if constexpr (S == Str::kLods) {
        reg_set<T>(c, 0, c.mmu.read<T>(linear(c, i.seg, si)));
        set_index(c, RSI, si + step, as);
    } else if constexpr (S == Str::kCmps) {
        const T a = c.mmu.read<T>(linear(c, i.seg, si));
        const T b = c.mmu.read<T>(linear(c, ES, di));
        c.lf.sub<T>(a, b, T(a - b));
        set_index(c, RSI, si + step, as);
        set_index(c, RDI, di + step, as);
    } else {
        const T a = reg_get<T>(c, 0);
        const T b = c.mmu.read<T>(linear(c, ES, di));
        c.lf.sub<T>(a, b, T(a - b));
        set_index(c, RDI, di + step, as);
    }
}

template <class T, Str S>
void h_string(Cpu& c, const Insn& i) { iterate<T, S>(c, i); }

/// REP-prefixed form: runs while rCX != 0 (and, for CMPS/SCAS, while the ZF
/// condition of REPE/REPNE holds), decrementing rCX after each iteration.
template <class T, Str S>
void h_rep(Cpu& c, const Insn& i) {
    const u8 as = i.asize;
    const u64 m = kAddrMask[as];
    while ((c.gpr[RCX] & m) != 0) {
        iterate<T, S>(c, i);
        set_index(c, RCX, (c.gpr[RCX] & m) - 1, as);
        if constexpr (S == Str::kCmps || S == Str::kScas) {
            if (i.aux == kRepE && !c.lf.zf()) break;
            if (i.aux == kRepNE && c.lf.zf()) break;
        }
    }
}

template <Str S>
bool bind_string(const DecodedInsn& d, Insn& out) {
    // Source operands use DS unless overridden; the destination is always ES
    // (SDM Vol. 2, MOVS: "the ES segment cannot be overridden").
    out.seg = d.pfx.seg != kNoSeg ? d.pfx.seg : u8(DS);
    Rep rep = kNoRep;
    if (d.pfx.rep || d.pfx.repne) {
        if (S == Str::kCmps || S == Str::kScas) rep = d.pfx.rep ? kRepE : kRepNE;
        else rep = kRepAlways;  // F2 acts as REP on MOVS/STOS/LODS
    }
    out.aux = rep;
    out.ends_block = rep != kNoRep;
    // The element size comes from the opcode (even: byte form) and pmusim's own prefix
    // scan, not from Capstone's mnemonic: Capstone 4 ignores a 66 that precedes F2/F3
    // ("66 F3 A5" is REP MOVSW, SDM Vol. 2, 2.1.1 and MOVS; Capstone says REP MOVSD).
    const unsigned size = (d.opcode[0] & 1) == 0 ? 1 : d.opsize;
    out.fn = pick_size(size, [&](auto t) -> Handler {
        using T = decltype(t);
        return rep ? &h_rep<T, S> : &h_string<T, S>;
    });
    return true;
}

}  // namespace

void register_string(BinderTable& t) {
    t.add(Op::MOVSB, bind_string<Str::kMovs>);
    t.add(Op::MOVSW, bind_string<Str::kMovs>);
    t.add(Op::MOVSD, bind_string<Str::kMovs>);
    t.add(Op::MOVSQ, bind_string<Str::kMovs>);
    t.add(Op::STOSB, bind_string<Str::kStos>);
    t.add(Op::STOSW, bind_string<Str::kStos>);
    t.add(Op::STOSD, bind_string<Str::kStos>);
    t.add(Op::STOSQ, bind_string<Str::kStos>);
    t.add(Op::LODSB, bind_string<Str::kLods>);
    t.add(Op::LODSW, bind_string<Str::kLods>);
    t.add(Op::LODSD, bind_string<Str::kLods>);
    t.add(Op::LODSQ, bind_string<Str::kLods>);
    t.add(Op::CMPSB, bind_string<Str::kCmps>);
    t.add(Op::CMPSW, bind_string<Str::kCmps>);
    t.add(Op::CMPSD, bind_string<Str::kCmps>);
    t.add(Op::CMPSQ, bind_string<Str::kCmps>);
    t.add(Op::SCASB, bind_string<Str::kScas>);
    t.add(Op::SCASW, bind_string<Str::kScas>);
    t.add(Op::SCASD, bind_string<Str::kScas>);
    t.add(Op::SCASQ, bind_string<Str::kScas>);
}

}  // namespace pmusim
