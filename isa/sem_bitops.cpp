// Bit instructions: BT BTS BTR BTC BSF BSR TZCNT LZCNT POPCNT. SDM Vol. 2.
// Undefined flags as an Intel Xeon sets them (observed, docs/semantics/integer.md):
// BT* leave OF SF AF PF unchanged; BSF/BSR clear OF SF AF CF and set PF from the
// bit index (1 for a zero source); TZCNT/LZCNT clear OF SF AF PF.
#include "isa/bind.h"

namespace pmusim {

namespace {

enum class Bt : u8 { kTest, kSet, kReset, kComplement };

template <class T, Bt B>
inline T bt_apply(Cpu& c, T v, unsigned bit) {
    const T m = T(T(1) << bit);
    c.lf.set_some(kCF, (v & m) ? kCF : 0);
    if constexpr (B == Bt::kSet) return T(v | m);
    else if constexpr (B == Bt::kReset) return T(v & ~m);
    else if constexpr (B == Bt::kComplement) return T(v ^ m);
    else return v;
}

/// Register destination: the bit offset is taken modulo the operand width.
template <class T, Bt B, bool ImmSrc>
void h_bt_reg(Cpu& c, const Insn& i) {
    const unsigned bit = unsigned(ImmSrc ? i.imm : reg_get<T>(c, i.rb)) & (sizeof(T) * 8 - 1);
    const T r = bt_apply<T, B>(c, reg_get<T>(c, i.ra), bit);
    if constexpr (B != Bt::kTest) reg_set<T>(c, i.ra, r);
}

/// Memory destination. An immediate offset is taken modulo the width; a register
/// offset is a signed bit string index that may reach outside the operand: the
/// operand-size unit containing the bit is accessed (SDM Vol. 2, BT, and Vol. 1, 3.1.1.9).
template <class T, Bt B, bool ImmSrc>
void h_bt_mem(Cpu& c, const Insn& i) {
    constexpr unsigned w = sizeof(T) * 8;
    u64 ea = effective_address(c, i);
    unsigned bit;
    if constexpr (ImmSrc) {
        bit = unsigned(i.imm) & (w - 1);
    } else {
        const i64 off = i64(std::make_signed_t<T>(reg_get<T>(c, i.rb)));
        ea = (ea + u64((off >> __builtin_ctz(w)) * i64(sizeof(T)))) & kAddrMask[i.asize];
        bit = unsigned(off) & (w - 1);
    }
    const SegAddr addr = linear(c, i.seg, ea);
    const T r = bt_apply<T, B>(c, c.mmu.read<T>(addr), bit);
    if constexpr (B != Bt::kTest) c.mmu.write<T>(addr, r);
}

template <Bt B>
bool bind_bt(const DecodedInsn& d, Insn& out) {
    if (d.nops != 2) return false;
    const DecodedOperand &a = d.ops[0], &s = d.ops[1];
    const bool mem = is_mem(a), imm = is_imm(s);
    if (mem) bind_mem(d, a, out);
    else if (is_reg(a)) out.ra = reg_off(a);
    else return false;
    if (imm) out.imm = u64(s.imm);
    else out.rb = reg_off(s);
    out.fn = pick_wide(a.size, [&](auto t) -> Handler {
        using T = decltype(t);
        if (mem) return imm ? &h_bt_mem<T, B, true> : &h_bt_mem<T, B, false>;
        return imm ? &h_bt_reg<T, B, true> : &h_bt_reg<T, B, false>;
    });
    return true;
}

enum class Scan : u8 { kBsf, kBsr, kTzcnt, kLzcnt, kPopcnt };

/// BSF/BSR: ZF = (src == 0); a zero source leaves the destination unchanged (the
/// SDM says undefined; Intel and AMD processors keep it, and pmusim does, all 64 bits).
/// TZCNT/LZCNT: CF = (src == 0), ZF = (result == 0). POPCNT: ZF = (src == 0), CF OF
/// SF AF PF cleared. Undefined flags: see the file comment.
template <class T, Scan S, bool Mem>
void h_scan(Cpu& c, const Insn& i) {
    constexpr unsigned w = sizeof(T) * 8;
    const T s = Mem ? c.mmu.read<T>(linear(c, i)) : reg_get<T>(c, i.rb);
    const u64 v = u64(s);
    if constexpr (S == Scan::kBsf || S == Scan::kBsr) {
        const unsigned idx = s ? unsigned(S == Scan::kBsf ? __builtin_ctzll(v) : 63 - __builtin_clzll(v)) : 0;
        c.lf.set((s ? 0 : kZF) | (__builtin_parity(idx) ? 0 : kPF));
        if (s) reg_set<T>(c, i.ra, T(idx));
    } else if constexpr (S == Scan::kTzcnt || S == Scan::kLzcnt) {
        const T r = s == 0 ? T(w) : T(S == Scan::kTzcnt ? __builtin_ctzll(v) : __builtin_clzll(v) - (64 - w));
        c.lf.set((s == 0 ? kCF : 0) | (r == 0 ? kZF : 0));
        reg_set<T>(c, i.ra, r);
    } else {
        c.lf.set(s ? 0 : kZF);
        reg_set<T>(c, i.ra, T(__builtin_popcountll(v)));
    }
}

template <Scan S>
bool bind_scan(const DecodedInsn& d, Insn& out) {
    if (d.nops != 2 || !is_reg(d.ops[0])) return false;
    out.ra = reg_off(d.ops[0]);
    const bool mem = is_mem(d.ops[1]);
    if (mem) bind_mem(d, d.ops[1], out);
    else out.rb = reg_off(d.ops[1]);
    out.fn = pick_wide(d.ops[0].size, [&](auto t) -> Handler {
        using T = decltype(t);
        return mem ? &h_scan<T, S, true> : &h_scan<T, S, false>;
    });
    return true;
}

}  // namespace

void register_bitops(BinderTable& t) {
    t.add(Op::BT, bind_bt<Bt::kTest>);
    t.add(Op::BTS, bind_bt<Bt::kSet>);
    t.add(Op::BTR, bind_bt<Bt::kReset>);
    t.add(Op::BTC, bind_bt<Bt::kComplement>);
    t.add(Op::BSF, bind_scan<Scan::kBsf>);
    t.add(Op::BSR, bind_scan<Scan::kBsr>);
    t.add(Op::TZCNT, bind_scan<Scan::kTzcnt>);
    t.add(Op::LZCNT, bind_scan<Scan::kLzcnt>);
    t.add(Op::POPCNT, bind_scan<Scan::kPopcnt>);
}

}  // namespace pmusim
