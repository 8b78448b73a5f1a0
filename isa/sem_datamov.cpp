// Data movement: MOV MOVABS MOVZX MOVSX MOVSXD LEA XCHG XADD CMPXCHG CMPXCHG8B/16B
// BSWAP XLATB CBW..CQO LAHF SAHF CMOVcc SETcc. SDM Vol. 2 (instruction pages).
#include "isa/bind.h"
#include "sim/fault.h"

namespace pmusim {

namespace {

template <class T, Form F>
struct Mov {
    static void run(Cpu& c, const Insn& i) {
        SegAddr addr{};
        if constexpr (F == Form::kMR || F == Form::kMI) addr = linear(c, i);
        store_a<T, F>(c, i, addr, load_b<T, F>(c, i));
    }
};

/// MOV r/m, Sreg: the selector; a register destination of 32/64 bits is zero-extended,
/// a memory destination is always written as 16 bits (SDM Vol. 2, MOV).
template <class T, bool Mem>
void h_mov_from_sreg(Cpu& c, const Insn& i) {
    const u16 sel = c.seg[i.aux].selector;
    if constexpr (Mem) c.mmu.write<u16>(linear(c, i), sel);
    else reg_set<T>(c, i.ra, T(sel));
}

bool bind_mov(const DecodedInsn& d, Insn& out) {
    if (d.nops != 2) return false;
    const DecodedOperand &a = d.ops[0], &b = d.ops[1];
    if (b.kind == DecodedOperand::kSeg) {
        out.aux = b.reg;
        const bool mem = is_mem(a);
        if (mem) bind_mem(d, a, out);
        else out.ra = reg_off(a);
        out.fn = pick_wide(mem ? 2 : a.size, [&](auto t) -> Handler {
            using T = decltype(t);
            return mem ? &h_mov_from_sreg<T, true> : &h_mov_from_sreg<T, false>;
        });
        return true;
    }
    Form f;
    if (!bind_two(d, out, f)) return false;
    out.fn = pick_size(a.size, [&](auto t) { return form_handler<decltype(t), Mov>(f); });
    return true;
}

/// MOVZX/MOVSX/MOVSXD: D destination type, S source type.
template <class D, class S, bool Signed, bool Mem>
void h_movx(Cpu& c, const Insn& i) {
    const S v = Mem ? c.mmu.read<S>(linear(c, i)) : reg_get<S>(c, i.rb);
    if constexpr (Signed) reg_set<D>(c, i.ra, D(std::make_signed_t<D>(std::make_signed_t<S>(v))));
    else reg_set<D>(c, i.ra, D(v));
}

template <bool Signed>
Handler movx_handler(unsigned dsize, unsigned ssize, bool mem) {
    auto pick_src = [&](auto dt) -> Handler {
        using D = decltype(dt);
        auto with = [&](auto st) -> Handler {
            using S = decltype(st);
            if constexpr (sizeof(S) > sizeof(D)) return nullptr;
            else return mem ? &h_movx<D, S, Signed, true> : &h_movx<D, S, Signed, false>;
        };
        return pick_size(ssize, with);
    };
    return pick_wide(dsize, pick_src);
}

template <bool Signed>
bool bind_movx(const DecodedInsn& d, Insn& out) {
    if (d.nops != 2 || !is_reg(d.ops[0])) return false;
    const DecodedOperand& s = d.ops[1];
    out.ra = reg_off(d.ops[0]);
    const bool mem = is_mem(s);
    if (mem) bind_mem(d, s, out);
    else if (is_reg(s)) out.rb = reg_off(s);
    else return false;
    out.fn = movx_handler<Signed>(d.ops[0].size, s.size, mem);
    return out.fn != nullptr;
}

/// MOVSXD (63 /r): sign-extends r/m32 only with REX.W; without it, it moves
/// operand-size bits like MOV (SDM Vol. 2, MOVSX/MOVSXD). Capstone 4 reports the
/// destination as 64 bits regardless, so the size comes from the prefixes.
bool bind_movsxd(const DecodedInsn& d, Insn& out) {
    if (d.nops != 2 || !is_reg(d.ops[0])) return false;
    const DecodedOperand& s = d.ops[1];
    out.ra = reg_off(d.ops[0].reg);
    const bool mem = is_mem(s);
    if (mem) bind_mem(d, s, out);
    else out.rb = reg_off(s.reg);
    const unsigned ssize = d.opsize == 8 ? 4 : d.opsize;
    out.fn = movx_handler<true>(d.opsize, ssize, mem);
    return true;
}

/// LEA: the effective address (no segment), truncated to the operand size.
template <class T>
void h_lea(Cpu& c, const Insn& i) {
    reg_set<T>(c, i.ra, T(effective_address(c, i)));
}

bool bind_lea(const DecodedInsn& d, Insn& out) {
    if (d.nops != 2 || !is_reg(d.ops[0]) || !is_mem(d.ops[1])) return false;
    out.ra = reg_off(d.ops[0]);
    bind_mem(d, d.ops[1], out);
    out.fn = pick_wide(d.ops[0].size, [&](auto t) -> Handler { return &h_lea<decltype(t)>; });
    return true;
}

template <class T, bool Mem>
void h_xchg(Cpu& c, const Insn& i) {
    if constexpr (Mem) {
        const SegAddr addr = linear(c, i);
        const T m = c.mmu.read<T>(addr);
        c.mmu.write<T>(addr, reg_get<T>(c, i.rb));
        reg_set<T>(c, i.rb, m);
    } else {
        const T a = reg_get<T>(c, i.ra), b = reg_get<T>(c, i.rb);
        reg_set<T>(c, i.ra, b);
        reg_set<T>(c, i.rb, a);
    }
}

/// XCHG with a memory operand in either position is the same instruction.
bool bind_mem_reg_pair(const DecodedInsn& d, Insn& out, bool& mem) {
    if (d.nops != 2) return false;
    const DecodedOperand *a = &d.ops[0], *b = &d.ops[1];
    if (is_mem(*b)) std::swap(a, b);
    if (!is_reg(*b)) return false;
    mem = is_mem(*a);
    if (mem) bind_mem(d, *a, out);
    else if (is_reg(*a)) out.ra = reg_off(*a);
    else return false;
    out.rb = reg_off(*b);
    return true;
}

bool bind_xchg(const DecodedInsn& d, Insn& out) {
    bool mem;
    if (!bind_mem_reg_pair(d, out, mem)) return false;
    out.fn = pick_size(d.ops[0].size, [&](auto t) -> Handler {
        using T = decltype(t);
        return mem ? &h_xchg<T, true> : &h_xchg<T, false>;
    });
    return true;
}

/// XADD r/m, r: TEMP = DEST + SRC; SRC = DEST; DEST = TEMP (SDM Vol. 2, XADD).
template <class T, bool Mem>
void h_xadd(Cpu& c, const Insn& i) {
    const T s = reg_get<T>(c, i.rb);
    if constexpr (Mem) {
        const SegAddr addr = linear(c, i);
        const T dst = c.mmu.read<T>(addr);
        const T r = T(dst + s);
        c.mmu.write<T>(addr, r);
        c.lf.add<T>(dst, s, r);
        reg_set<T>(c, i.rb, dst);
    } else {
        const T dst = reg_get<T>(c, i.ra);
        const T r = T(dst + s);
        c.lf.add<T>(dst, s, r);
        reg_set<T>(c, i.rb, dst);
        reg_set<T>(c, i.ra, r);
    }
}

/// CMPXCHG r/m, r: compares the accumulator with DEST (flags of CMP acc, DEST).
/// Equal: DEST = SRC. Not equal: accumulator = DEST, and DEST is written back with
/// its own value (a memory destination always sees a write cycle) (SDM Vol. 2, CMPXCHG).
/// A register destination is written only when equal, the accumulator only when not
/// equal, so a 32-bit form zero-extends just the register actually written.
template <class T, bool Mem>
void h_cmpxchg(Cpu& c, const Insn& i) {
    const T acc = reg_get<T>(c, 0);
    const T s = reg_get<T>(c, i.rb);
    SegAddr addr{};
    T dst;
    if constexpr (Mem) {
        addr = linear(c, i);
        dst = c.mmu.read<T>(addr);
    } else {
        dst = reg_get<T>(c, i.ra);
    }
    const T diff = T(acc - dst);
    if (acc == dst) {
        if constexpr (Mem) c.mmu.write<T>(addr, s);
        else reg_set<T>(c, i.ra, s);
    } else {
        if constexpr (Mem) c.mmu.write<T>(addr, dst);
        reg_set<T>(c, 0, dst);
    }
    c.lf.sub<T>(acc, dst, diff);
}

bool bind_xadd_cmpxchg(const DecodedInsn& d, Insn& out, bool xadd) {
    if (d.nops != 2 || !is_reg(d.ops[1])) return false;
    const DecodedOperand& a = d.ops[0];
    const bool mem = is_mem(a);
    if (mem) bind_mem(d, a, out);
    else if (is_reg(a)) out.ra = reg_off(a);
    else return false;
    out.rb = reg_off(d.ops[1]);
    out.fn = pick_size(a.size, [&](auto t) -> Handler {
        using T = decltype(t);
        if (xadd) return mem ? &h_xadd<T, true> : &h_xadd<T, false>;
        return mem ? &h_cmpxchg<T, true> : &h_cmpxchg<T, false>;
    });
    return true;
}
bool bind_xadd(const DecodedInsn& d, Insn& out) { return bind_xadd_cmpxchg(d, out, true); }
bool bind_cmpxchg(const DecodedInsn& d, Insn& out) { return bind_xadd_cmpxchg(d, out, false); }

/// CMPXCHG8B m64 / CMPXCHG16B m128 (SDM Vol. 2): compares rDX:rAX with the memory
/// operand; equal: ZF=1 and memory = rCX:rBX; else ZF=0, rDX:rAX = memory, and the
/// memory is written back unchanged. Other flags unaffected. CMPXCHG16B needs
/// 16-byte alignment (#GP(0)).
template <class H>
void h_cmpxchg_wide(Cpu& c, const Insn& i) {
    constexpr u64 kHalf = sizeof(H);
    const SegAddr addr = linear(c, i);
    if (kHalf == 8 && (addr.lin & 15)) raise_fault(vec::GP, 0);
    const H lo = c.mmu.read<H>(addr), hi = c.mmu.read<H>(addr + kHalf);
    const bool eq = lo == H(c.gpr[RAX]) && hi == H(c.gpr[RDX]);
    if (eq) {
        c.mmu.write<H>(addr, H(c.gpr[RBX]));
        c.mmu.write<H>(addr + kHalf, H(c.gpr[RCX]));
    } else {
        c.mmu.write<H>(addr, lo);
        c.mmu.write<H>(addr + kHalf, hi);
        c.gpr[RAX] = lo;  // 32-bit halves zero-extend (SDM Vol. 1, 3.4.1.1)
        c.gpr[RDX] = hi;
    }
    c.lf.set_some(kZF, eq ? kZF : 0);
}

bool bind_cmpxchg8b(const DecodedInsn& d, Insn& out) {
    if (d.nops != 1 || !is_mem(d.ops[0])) return false;
    bind_mem(d, d.ops[0], out);
    out.fn = (d.pfx.rex & 8) ? &h_cmpxchg_wide<u64> : &h_cmpxchg_wide<u32>;
    return true;
}

/// BSWAP; with a 16-bit operand the result is undefined by the SDM: Intel and AMD
/// processors clear the low 16 bits, which pmusim reproduces (docs/semantics/integer.md).
template <class T>
void h_bswap(Cpu& c, const Insn& i) {
    if constexpr (sizeof(T) == 2) reg_set<u16>(c, i.ra, 0);
    else if constexpr (sizeof(T) == 4) reg_set<u32>(c, i.ra, __builtin_bswap32(reg_get<u32>(c, i.ra)));
    else reg_set<u64>(c, i.ra, __builtin_bswap64(reg_get<u64>(c, i.ra)));
}

bool bind_bswap(const DecodedInsn& d, Insn& out) {
    if (d.nops != 1 || !is_reg(d.ops[0])) return false;
    out.ra = reg_off(d.ops[0].reg);
    out.fn = pick_wide(d.opsize, [&](auto t) -> Handler { return &h_bswap<decltype(t)>; });
    return true;
}

/// XLATB: AL = [seg:rBX + AL] (DS default, overridable).
void h_xlat(Cpu& c, const Insn& i) {
    const u64 off = (c.gpr[RBX] + u8(c.gpr[RAX])) & kAddrMask[i.asize];
    reg_set<u8>(c, 0, c.mmu.read<u8>(linear(c, i.seg, off)));
}

bool bind_xlat(const DecodedInsn& d, Insn& out) {
    out.seg = d.pfx.seg != kNoSeg ? d.pfx.seg : u8(DS);
    out.fn = h_xlat;
    return true;
}

/// CBW/CWDE/CDQE: sign-extend the lower half of the accumulator into all of it.
template <class T>
void h_cbw(Cpu& c, const Insn&) {
    using H = std::conditional_t<sizeof(T) == 2, i8, std::conditional_t<sizeof(T) == 4, i16, i32>>;
    reg_set<T>(c, 0, T(std::make_signed_t<T>(H(c.gpr[RAX]))));
}
/// CWD/CDQ/CQO: rDX = sign of the accumulator.
template <class T>
void h_cwd(Cpu& c, const Insn&) {
    reg_set<T>(c, reg_off(RDX), T(std::make_signed_t<T>(reg_get<T>(c, 0)) < 0 ? ~T(0) : T(0)));
}

/// The width comes from the prefixes: Capstone 4 names 98/99 in 16-bit code CWDE/CDQ.
template <bool Cbw>
bool bind_by_opsize(const DecodedInsn& d, Insn& out) {
    out.fn = pick_wide(d.opsize, [&](auto t) -> Handler {
        using T = decltype(t);
        return Cbw ? &h_cbw<T> : &h_cwd<T>;
    });
    return true;
}

/// LAHF/SAHF: AH <-> SF:ZF:0:AF:0:PF:1:CF (SDM Vol. 2).
void h_lahf(Cpu& c, const Insn&) { reg_set<u8>(c, 1, u8(c.lf.get() | kFixed1)); }
void h_sahf(Cpu& c, const Insn&) {
    c.lf.set_some(kSF | kZF | kAF | kPF | kCF, reg_get<u8>(c, 1));
}
/// CMOVcc: the source is read whatever the condition, and a 32-bit destination is
/// zero-extended even when the condition is false (SDM Vol. 2, CMOVcc).
template <class T, bool Mem>
void h_cmov(Cpu& c, const Insn& i) {
    const T s = Mem ? c.mmu.read<T>(linear(c, i)) : reg_get<T>(c, i.rb);
    const T v = eval_cond(c.lf, i.aux) ? s : reg_get<T>(c, i.ra);
    reg_set<T>(c, i.ra, v);
}

template <u8 CC>
bool bind_cmov(const DecodedInsn& d, Insn& out) {
    if (d.nops != 2 || !is_reg(d.ops[0])) return false;
    out.aux = CC;
    out.ra = reg_off(d.ops[0]);
    const bool mem = is_mem(d.ops[1]);
    if (mem) bind_mem(d, d.ops[1], out);
    else out.rb = reg_off(d.ops[1]);
    out.fn = pick_wide(d.ops[0].size, [&](auto t) -> Handler {
        using T = decltype(t);
        return mem ? &h_cmov<T, true> : &h_cmov<T, false>;
    });
    return true;
}

template <bool Mem>
void h_setcc(Cpu& c, const Insn& i) {
    const u8 v = eval_cond(c.lf, i.aux);
    if constexpr (Mem) c.mmu.write<u8>(linear(c, i), v);
    else reg_set<u8>(c, i.ra, v);
}

template <u8 CC>
bool bind_setcc(const DecodedInsn& d, Insn& out) {
    if (d.nops != 1) return false;
    out.aux = CC;
    const bool mem = is_mem(d.ops[0]);
    if (mem) bind_mem(d, d.ops[0], out);
    else out.ra = reg_off(d.ops[0]);
    out.fn = mem ? &h_setcc<true> : &h_setcc<false>;
    return true;
}

}  // namespace

void register_datamov(BinderTable& t) {
    t.add(Op::MOV, bind_mov);
    t.add(Op::MOVABS, bind_mov);
    t.add(Op::MOVZX, bind_movx<false>);
    t.add(Op::MOVSX, bind_movx<true>);
    t.add(Op::MOVSXD, bind_movsxd);
    t.add(Op::LEA, bind_lea);
    t.add(Op::XCHG, bind_xchg);
    t.add(Op::XADD, bind_xadd);
    t.add(Op::CMPXCHG, bind_cmpxchg);
    t.add(Op::CMPXCHG8B, bind_cmpxchg8b);
    t.add(Op::CMPXCHG16B, bind_cmpxchg8b);
    t.add(Op::BSWAP, bind_bswap);
    t.add(Op::XLATB, bind_xlat);
    for (Op op : {Op::CBW, Op::CWDE, Op::CDQE}) t.add(op, bind_by_opsize<true>);
    for (Op op : {Op::CWD, Op::CDQ, Op::CQO}) t.add(op, bind_by_opsize<false>);
    t.add(Op::LAHF, bind_fixed<h_lahf>);
    t.add(Op::SAHF, bind_fixed<h_sahf>);
#define CC(n) t.add(Op::CMOV##n, bind_cmov<k##n>); t.add(Op::SET##n, bind_setcc<k##n>);
    CC(O) CC(NO) CC(B) CC(AE) CC(E) CC(NE) CC(BE) CC(A) CC(S) CC(NS) CC(P) CC(NP) CC(L) CC(GE) CC(LE) CC(G)
#undef CC
}

}  // namespace pmusim
