// Lazily evaluated arithmetic flags (OF SF ZF AF PF CF).
//
// Most instructions write all six arithmetic flags and the next instruction
// usually overwrites them without reading them, so the core stores just enough
// to derive them later (the technique Bochs calls "lazy flags"; this encoding is ours):
//   res  - the result sign-extended to 64 bits: ZF = (res == 0), SF = res bit 63 ^ SD.
//   aux  - bit 63 = CF, bit 62 = CF ^ OF, bit 3 = AF, bit 0 = SD (sign delta),
//          bits 15:8 = parity delta: PF = even parity of (res ^ (aux >> 8)) low byte.
// For ADD/SUB-like operations aux is built from the carry-out (borrow-out) vector,
// whose top two bits give CF and OF and whose bit 3 is AF (SDM Vol. 1, 3.4.3.1).
// The deltas let any combination of flag values be represented (POPF, SAHF).
#pragma once
#include <type_traits>

#include "sim/types.h"

namespace pmusim {

/// RFLAGS bits (SDM Vol. 1, 3.4.3; Vol. 3, 2.3).
inline constexpr u64 kCF = 1ull << 0, kFixed1 = 1ull << 1, kPF = 1ull << 2, kAF = 1ull << 4,
                     kZF = 1ull << 6, kSF = 1ull << 7, kTF = 1ull << 8, kIF = 1ull << 9,
                     kDF = 1ull << 10, kOF = 1ull << 11, kIOPL = 3ull << 12, kNT = 1ull << 14,
                     kRF = 1ull << 16, kVM = 1ull << 17, kAC = 1ull << 18, kVIF = 1ull << 19,
                     kVIP = 1ull << 20, kID = 1ull << 21;
constexpr u64 kArithFlags = kCF | kPF | kAF | kZF | kSF | kOF;

struct LazyFlags {
    u64 res = 1ull << 8;  // ZF=0 SF=0, parity of low byte 0 = even
    u64 aux = 1ull << 8;  // parity delta 1 -> PF=0: all six flags clear

    bool cf() const { return aux >> 63; }
    bool of() const { return ((aux >> 63) ^ (aux >> 62)) & 1; }
    bool af() const { return (aux >> 3) & 1; }
    bool zf() const { return res == 0; }
    bool sf() const { return ((res >> 63) ^ aux) & 1; }
    bool pf() const { return !__builtin_parity(u8(res ^ (aux >> 8))); }

    /// The six arithmetic flags as RFLAGS bits.
    u64 get() const {
        return (cf() ? kCF : 0) | (pf() ? kPF : 0) | (af() ? kAF : 0) | (zf() ? kZF : 0) |
               (sf() ? kSF : 0) | (of() ? kOF : 0);
    }
    /// Sets all six arithmetic flags from RFLAGS bits (other bits ignored).
    void set(u64 f) {
        const u64 cf = (f & kCF) != 0, of = (f & kOF) != 0;
        res = (f & kZF) ? 0 : (1ull << 8);
        aux = (cf << 63) | ((cf ^ of) << 62) | ((f & kAF) ? 8 : 0) | ((f & kSF) ? 1 : 0) |
              ((f & kPF) ? 0 : (1ull << 8));
    }
    /// Replaces the flags in `mask` by those in `f`, keeping the others.
    void set_some(u64 mask, u64 f) { set((get() & ~mask) | (f & mask)); }

    /// Result-only flags (logic ops): SF ZF PF from r, CF=OF=0, AF=0 (AF is
    /// undefined for AND/OR/XOR/TEST in the SDM; Intel processors clear it).
    template <class T>
    void logic(T r) {
        res = u64(i64(std::make_signed_t<T>(r)));
        aux = 0;
    }
    template <class T>
    void add(T a, T b, T r) {
        constexpr int n = sizeof(T) * 8;
        const T cout = T((a & b) | ((a | b) & T(~r)));
        res = u64(i64(std::make_signed_t<T>(r)));
        aux = (u64(cout) & 8) | ((u64(cout >> (n - 2)) & 3) << 62);
    }
    template <class T>
    void sub(T a, T b, T r) {
        constexpr int n = sizeof(T) * 8;
        const T bout = T((T(~a) & b) | (T(~(a ^ b)) & r));
        res = u64(i64(std::make_signed_t<T>(r)));
        aux = (u64(bout) & 8) | ((u64(bout >> (n - 2)) & 3) << 62);
    }
    /// INC/DEC: like ADD/SUB with 1 but CF is preserved (SDM Vol. 2, INC/DEC).
    template <class T>
    void inc(T a, T r) {
        const u64 keep_cf = aux >> 63;
        add<T>(a, T(1), r);
        aux = (aux & ~(3ull << 62)) | (keep_cf << 63) | ((keep_cf ^ of_from_top(aux)) << 62);
    }
    template <class T>
    void dec(T a, T r) {
        const u64 keep_cf = aux >> 63;
        sub<T>(a, T(1), r);
        aux = (aux & ~(3ull << 62)) | (keep_cf << 63) | ((keep_cf ^ of_from_top(aux)) << 62);
    }
    /// Result flags from r (SF ZF PF), with explicit CF, OF and AF.
    template <class T>
    void result_with(T r, bool cf, bool of, bool af = false) {
        res = u64(i64(std::make_signed_t<T>(r)));
        aux = (u64(cf) << 63) | (u64(cf ^ of) << 62) | (af ? 8 : 0);
    }
    /// Keeps SF ZF PF AF, replaces CF and OF.
    void set_cf_of(bool cf, bool of) {
        aux = (aux & ~(3ull << 62)) | (u64(cf) << 63) | (u64(cf ^ of) << 62);
    }

private:
    static u64 of_from_top(u64 a) { return ((a >> 63) ^ (a >> 62)) & 1; }
};

/// Condition codes in encoding order (SDM Vol. 1, Appendix B, Table B-1).
enum Cond : u8 { kO, kNO, kB, kAE, kE, kNE, kBE, kA, kS, kNS, kP, kNP, kL, kGE, kLE, kG };

inline bool eval_cond(const LazyFlags& f, u8 cc) {
    bool r;
    switch (cc >> 1) {
        case 0: r = f.of(); break;
        case 1: r = f.cf(); break;
        case 2: r = f.zf(); break;
        case 3: r = f.cf() || f.zf(); break;
        case 4: r = f.sf(); break;
        case 5: r = f.pf(); break;
        case 6: r = f.sf() != f.of(); break;
        default: r = f.zf() || (f.sf() != f.of()); break;
    }
    return r ^ (cc & 1);
}

}  // namespace pmusim
