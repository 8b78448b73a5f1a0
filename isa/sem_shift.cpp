// Shifts and rotates: SHL/SAL SHR SAR ROL ROR RCL RCR SHLD SHRD.
// SDM Vol. 2 (instruction pages). Flags the SDM leaves undefined follow what an
// Intel Xeon does (observed, docs/semantics/integer.md): OF for any count is the
// SDM's 1-bit formula applied to the original operands, AF is cleared, CF is 0
// for SHL/SHR counts beyond the width, and RCL/RCR with a count that is a
// multiple of width+1 leave CF and OF unchanged.
#include "isa/bind.h"

namespace pmusim {

namespace {

enum class Sh : u8 { kShl, kShr, kSar, kRol, kRor, kRcl, kRcr };

template <class T>
constexpr bool msb(T v) { return (v >> (sizeof(T) * 8 - 1)) & 1; }
template <class T>
constexpr bool bit2(T v) { return (v >> (sizeof(T) * 8 - 2)) & 1; }

/// Applies shift/rotate S by the masked count `n` (> 0) to `a`, setting flags.
template <class T, Sh S>
T shift(Cpu& c, T a, unsigned n) {
    constexpr unsigned w = sizeof(T) * 8;
    T r;
    bool cf;
    if constexpr (S == Sh::kShl) {
        r = n < w ? T(a << n) : T(0);
        cf = n <= w ? ((a >> (w - n)) & 1) : false;
        c.lf.result_with<T>(r, cf, msb(a) ^ bit2(a));
    } else if constexpr (S == Sh::kShr) {
        r = n < w ? T(a >> n) : T(0);
        cf = n <= w ? ((a >> (n - 1)) & 1) : false;
        c.lf.result_with<T>(r, cf, msb(a));
    } else if constexpr (S == Sh::kSar) {
        using ST = std::make_signed_t<T>;
        const unsigned k = n < w ? n : w - 1;
        r = T(ST(a) >> k);
        cf = (ST(a) >> (n - 1 < w ? n - 1 : w - 1)) & 1;
        c.lf.result_with<T>(r, cf, false);
    } else if constexpr (S == Sh::kRol || S == Sh::kRor) {
        // Flags change whenever the masked count is non-zero, even if count mod width is 0.
        const unsigned k = n % w;
        if constexpr (S == Sh::kRol) {
            r = k ? T((a << k) | (a >> (w - k))) : a;
            c.lf.set_cf_of(r & 1, msb(a) ^ bit2(a));
        } else {
            r = k ? T((a >> k) | (a << (w - k))) : a;
            c.lf.set_cf_of(msb(r), (a & 1) ^ msb(a));
        }
    } else {
        // RCL/RCR rotate the (w+1)-bit value CF:a by count mod (w+1).
        using W = unsigned __int128;
        const unsigned k = n % (w + 1);
        if (k == 0) return a;
        const W mask = (W(1) << (w + 1)) - 1;
        const bool cf_in = c.lf.cf();
        const W v = (W(cf_in) << w) | W(a);
        W x;
        if constexpr (S == Sh::kRcl) x = ((v << k) | (v >> (w + 1 - k))) & mask;
        else x = ((v >> k) | (v << (w + 1 - k))) & mask;
        r = T(x);
        cf = (x >> w) & 1;
        c.lf.set_cf_of(cf, S == Sh::kRcl ? (msb(a) ^ bit2(a)) : (msb(a) ^ cf_in));
    }
    return r;
}

/// aux: 1 = count in CL, 0 = count in imm. A zero masked count changes no flags
/// and no value, but the destination is still written: a register (32-bit forms
/// zero-extend, as Intel processors do) or memory (see below).
template <class T, Sh S, bool Mem>
void h_shift(Cpu& c, const Insn& i) {
    const unsigned mask = sizeof(T) == 8 ? 0x3F : 0x1F;  // SDM: count masked to 6 or 5 bits
    const unsigned n = unsigned(i.aux ? c.gpr[RCX] : i.imm) & mask;
    if constexpr (Mem) {
        // The operand is read and written back whatever the count (SDM Vol. 2B, SAL/SAR/
        // SHL/SHR and RCL/RCR/ROL/ROR Operation: tempDEST := DEST), so a count of 0 still
        // sets the accessed and dirty bits and faults on a read-only page, as Bochs does.
        const SegAddr addr = linear(c, i);
        const T a = c.mmu.read<T>(addr);
        c.mmu.write<T>(addr, n ? shift<T, S>(c, a, n) : a);
    } else {
        const T a = reg_get<T>(c, i.ra);
        reg_set<T>(c, i.ra, n ? shift<T, S>(c, a, n) : a);
    }
}

template <Sh S>
bool bind_shift(const DecodedInsn& d, Insn& out) {
    if (d.nops != 2) return false;
    const DecodedOperand &a = d.ops[0], &cnt = d.ops[1];
    const bool mem = is_mem(a);
    if (mem) bind_mem(d, a, out);
    else if (is_reg(a)) out.ra = reg_off(a);
    else return false;
    if (is_imm(cnt)) out.imm = u64(cnt.imm);
    else out.aux = 1;
    out.fn = pick_size(a.size, [&](auto t) -> Handler {
        using T = decltype(t);
        return mem ? &h_shift<T, S, true> : &h_shift<T, S, false>;
    });
    return true;
}

/// SHLD/SHRD dst, src, count (SDM Vol. 2). For 16-bit operands with a count above
/// 16 the result is undefined; pmusim shifts the 48-bit value dst:src:dst, which
/// matches the observed Intel result. OF is the 1-bit formula on the original
/// operands for every count (observed; docs/semantics/integer.md).
template <class T, bool Left>
T double_shift(Cpu& c, T a, T b, unsigned n) {
    constexpr unsigned w = sizeof(T) * 8;
    T r;
    bool cf;
    if constexpr (w == 16) {
        const u64 v = (u64(a) << 32) | (u64(b) << 16) | a;  // dst:src:dst
        if (Left) {
            r = T((v << n) >> 32);
            cf = (v >> (48 - n)) & 1;
        } else {
            r = T(v >> n);
            cf = (v >> (n - 1)) & 1;
        }
    } else {
        if (Left) {
            r = T((a << n) | (b >> (w - n)));
            cf = (a >> (w - n)) & 1;
        } else {
            r = T((a >> n) | (b << (w - n)));
            cf = (a >> (n - 1)) & 1;
        }
    }
    c.lf.result_with<T>(r, cf, Left ? (msb(a) ^ bit2(a)) : (bool(b & 1) ^ msb(a)));
    return r;
}

template <class T, bool Left, bool Mem>
void h_shxd(Cpu& c, const Insn& i) {
    const unsigned mask = sizeof(T) == 8 ? 0x3F : 0x1F;
    const unsigned n = unsigned(i.aux ? c.gpr[RCX] : i.imm) & mask;
    const T b = reg_get<T>(c, i.rb);
    if constexpr (Mem) {
        const SegAddr addr = linear(c, i);  // read and written back even for a count of 0
        const T a = c.mmu.read<T>(addr);
        c.mmu.write<T>(addr, n ? double_shift<T, Left>(c, a, b, n) : a);
    } else {
        const T a = reg_get<T>(c, i.ra);
        reg_set<T>(c, i.ra, n ? double_shift<T, Left>(c, a, b, n) : a);
    }
}

template <bool Left>
bool bind_shxd(const DecodedInsn& d, Insn& out) {
    if (d.nops != 3 || !is_reg(d.ops[1])) return false;
    const DecodedOperand& a = d.ops[0];
    const bool mem = is_mem(a);
    if (mem) bind_mem(d, a, out);
    else if (is_reg(a)) out.ra = reg_off(a);
    else return false;
    out.rb = reg_off(d.ops[1]);
    if (is_imm(d.ops[2])) out.imm = u64(d.ops[2].imm);
    else out.aux = 1;
    out.fn = pick_wide(a.size, [&](auto t) -> Handler {
        using T = decltype(t);
        return mem ? &h_shxd<T, Left, true> : &h_shxd<T, Left, false>;
    });
    return true;
}

}  // namespace

void register_shift(BinderTable& t) {
    t.add(Op::SHL, bind_shift<Sh::kShl>);
    t.add(Op::SAL, bind_shift<Sh::kShl>);
    t.add(Op::SHR, bind_shift<Sh::kShr>);
    t.add(Op::SAR, bind_shift<Sh::kSar>);
    t.add(Op::ROL, bind_shift<Sh::kRol>);
    t.add(Op::ROR, bind_shift<Sh::kRor>);
    t.add(Op::RCL, bind_shift<Sh::kRcl>);
    t.add(Op::RCR, bind_shift<Sh::kRcr>);
    t.add(Op::SHLD, bind_shxd<true>);
    t.add(Op::SHRD, bind_shxd<false>);
}

}  // namespace pmusim
