// MUL IMUL DIV IDIV. SDM Vol. 2 (instruction pages).
// Undefined flags, as an Intel Xeon sets them (observed, docs/semantics/integer.md):
// after MUL/IMUL, ZF = 0, SF = MSB of the low half, PF = parity of the low byte,
// AF = 0; DIV/IDIV leave all six flags unchanged.
#include "isa/bind.h"
#include "sim/fault.h"

namespace pmusim {

namespace {

template <class T> struct Wide;
template <> struct Wide<u8> { using U = u16; using S = i16; };
template <> struct Wide<u16> { using U = u32; using S = i32; };
template <> struct Wide<u32> { using U = u64; using S = i64; };
template <> struct Wide<u64> { using U = unsigned __int128; using S = __int128; };

/// Flags after MUL/IMUL: CF = OF = `ovf`; the undefined ones as observed on Intel.
template <class T>
inline void mul_flags(Cpu& c, T lo, bool ovf) {
    c.lf.set((ovf ? (kCF | kOF) : 0) | ((lo >> (sizeof(T) * 8 - 1)) & 1 ? kSF : 0) |
             (__builtin_parity(u8(lo)) ? 0 : kPF));
}

template <class T, bool Mem>
inline T source(Cpu& c, const Insn& i) {
    if constexpr (Mem) return c.mmu.read<T>(linear(c, i));
    else return reg_get<T>(c, i.ra);
}

/// Stores a double-width product/quotient pair: AX for bytes, else rDX:rAX.
template <class T>
inline void store_pair(Cpu& c, T lo, T hi) {
    if constexpr (sizeof(T) == 1) {
        reg_set<u16>(c, 0, u16(lo | (u16(hi) << 8)));
    } else {
        reg_set<T>(c, reg_off(RAX), lo);
        reg_set<T>(c, reg_off(RDX), hi);
    }
}
template <class T>
inline typename Wide<T>::U load_pair(const Cpu& c) {
    using U = typename Wide<T>::U;
    if constexpr (sizeof(T) == 1) return U(reg_get<u16>(c, 0));
    else return (U(reg_get<T>(c, reg_off(RDX))) << (sizeof(T) * 8)) | U(reg_get<T>(c, reg_off(RAX)));
}

/// MUL: CF = OF = upper half non-zero.
template <class T, bool Mem>
void h_mul(Cpu& c, const Insn& i) {
    using U = typename Wide<T>::U;
    const U p = U(reg_get<T>(c, 0)) * U(source<T, Mem>(c, i));
    const T lo = T(p), hi = T(p >> (sizeof(T) * 8));
    store_pair<T>(c, lo, hi);
    mul_flags<T>(c, lo, hi != 0);
}

/// One-operand IMUL: CF = OF = the product does not fit the low half as a signed value.
template <class T, bool Mem>
void h_imul1(Cpu& c, const Insn& i) {
    using S = typename Wide<T>::S;
    using ST = std::make_signed_t<T>;
    const S p = S(ST(reg_get<T>(c, 0))) * S(ST(source<T, Mem>(c, i)));
    const T lo = T(p), hi = T(p >> (sizeof(T) * 8));
    store_pair<T>(c, lo, hi);
    mul_flags<T>(c, lo, p != S(ST(lo)));
}

/// Two- and three-operand IMUL: dst = src1 * src2 truncated; aux=1 means src2 = imm.
template <class T, bool Mem, bool Imm>
void h_imul_n(Cpu& c, const Insn& i) {
    using S = typename Wide<T>::S;
    using ST = std::make_signed_t<T>;
    const T a = Imm ? source<T, Mem>(c, i) : reg_get<T>(c, i.rb);
    const T b = Imm ? T(i.imm) : (Mem ? c.mmu.read<T>(linear(c, i)) : reg_get<T>(c, i.ra));
    const S p = S(ST(a)) * S(ST(b));
    const T lo = T(p);
    reg_set<T>(c, i.rb, lo);
    mul_flags<T>(c, lo, p != S(ST(lo)));
}

/// DIV: #DE on a zero divisor or a quotient that does not fit (SDM Vol. 2, DIV).
template <class T, bool Mem>
void h_div(Cpu& c, const Insn& i) {
    using U = typename Wide<T>::U;
    const T d = source<T, Mem>(c, i);
    if (d == 0) raise_fault(vec::DE);
    const U n = load_pair<T>(c);
    const U q = n / d;
    if (q >> (sizeof(T) * 8)) raise_fault(vec::DE);
    store_pair<T>(c, T(q), T(n % d));
}

/// IDIV: quotient truncated toward zero, remainder has the dividend's sign; #DE
/// on a zero divisor or a quotient outside the signed range (SDM Vol. 2, IDIV).
template <class T, bool Mem>
void h_idiv(Cpu& c, const Insn& i) {
    using S = typename Wide<T>::S;
    using ST = std::make_signed_t<T>;
    const ST d = ST(source<T, Mem>(c, i));
    if (d == 0) raise_fault(vec::DE);
    const S n = S(load_pair<T>(c));
    const S smin = S(typename Wide<T>::U(1) << (sizeof(S) * 8 - 1));
    if (n == smin && d == -1) raise_fault(vec::DE);  // the host division would overflow too
    const S q = n / d;
    if (q != S(ST(q))) raise_fault(vec::DE);
    store_pair<T>(c, T(q), T(n % d));
}

template <template <class, bool> class H>
bool bind_one(const DecodedInsn& d, Insn& out) {
    if (d.nops != 1) return false;
    const bool mem = is_mem(d.ops[0]);
    if (mem) bind_mem(d, d.ops[0], out);
    else out.ra = reg_off(d.ops[0]);
    out.fn = pick_size(d.ops[0].size, [&](auto t) -> Handler {
        using T = decltype(t);
        return mem ? &H<T, true>::run : &H<T, false>::run;
    });
    return true;
}

template <class T, bool Mem> struct Mul { static void run(Cpu& c, const Insn& i) { h_mul<T, Mem>(c, i); } };
template <class T, bool Mem> struct Imul1 { static void run(Cpu& c, const Insn& i) { h_imul1<T, Mem>(c, i); } };
template <class T, bool Mem> struct Div { static void run(Cpu& c, const Insn& i) { h_div<T, Mem>(c, i); } };
template <class T, bool Mem> struct Idiv { static void run(Cpu& c, const Insn& i) { h_idiv<T, Mem>(c, i); } };

bool bind_imul(const DecodedInsn& d, Insn& out) {
    if (d.nops == 1) return bind_one<Imul1>(d, out);
    if (d.nops < 2 || !is_reg(d.ops[0])) return false;
    // rb = destination register; ra/mem = the r/m source.
    out.rb = reg_off(d.ops[0]);
    const DecodedOperand& s = d.ops[1];
    const bool mem = is_mem(s);
    if (mem) bind_mem(d, s, out);
    else out.ra = reg_off(s);
    const bool imm = d.nops == 3;
    if (imm) out.imm = u64(d.ops[2].imm);
    out.fn = pick_wide(d.ops[0].size, [&](auto t) -> Handler {
        using T = decltype(t);
        if (imm) return mem ? &h_imul_n<T, true, true> : &h_imul_n<T, false, true>;
        return mem ? &h_imul_n<T, true, false> : &h_imul_n<T, false, false>;
    });
    return true;
}

}  // namespace

void register_muldiv(BinderTable& t) {
    t.add(Op::MUL, bind_one<Mul>);
    t.add(Op::IMUL, bind_imul);
    t.add(Op::DIV, bind_one<Div>);
    t.add(Op::IDIV, bind_one<Idiv>);
}

}  // namespace pmusim
