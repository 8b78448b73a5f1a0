// Near control transfers: JMP, Jcc, JCXZ/JECXZ/JRCXZ, LOOP/LOOPE/LOOPNE, CALL, RET.
// SDM Vol. 2 (instruction pages), Vol. 1, 6.3 (calling procedures).
#include "isa/bind.h"
#include "sim/fault.h"

namespace pmusim {

namespace {

/// Near-branch operand size: 64 bits in 64-bit mode on Intel processors, where 66 is
/// ignored (SDM Vol. 2, JMP/CALL/RET: "operand size forced to 64 bits"); else the
/// instruction's operand size.
u8 branch_size(const DecodedInsn& d) { return d.mode == CodeBits::k64 ? 8 : d.opsize; }

/// Commits a branch target: in 64-bit mode a non-canonical target raises #GP(0)
/// at the branch instruction itself (SDM Vol. 2, JMP "64-Bit Mode Exceptions").
inline void go(Cpu& c, const Insn& i, BranchKind kind, u64 target) {
    if (c.code_bits == CodeBits::k64 && !is_canonical(target)) raise_fault(vec::GP, 0);
    c.rip = target;
    c.branch(kind, i.addr(), target);
}

void h_jmp_rel(Cpu& c, const Insn& i) { go(c, i, BranchKind::kJmpRel, i.imm); }

/// JMP to itself (`jmp $`, how bare-metal programs end): a taken branch like any
/// other, and a hint to the run loop that the guest may be idle.
void h_jmp_self(Cpu& c, const Insn& i) {
    go(c, i, BranchKind::kJmpRel, i.imm);
    c.pending |= kPendingIdleLoop;
}

void h_jcc(Cpu& c, const Insn& i) {
    if (eval_cond(c.lf, i.aux)) go(c, i, BranchKind::kJcc, i.imm);
}

/// Count register (CX/ECX/RCX by address size) as an unsigned value.
inline u64 count_reg(const Cpu& c, const Insn& i) { return c.gpr[RCX] & kAddrMask[i.asize]; }

void h_jcxz(Cpu& c, const Insn& i) {
    if (count_reg(c, i) == 0) go(c, i, BranchKind::kJcc, i.imm);
}

/// LOOP family; aux: 0 = LOOP, 1 = LOOPE (ZF=1), 2 = LOOPNE (ZF=0). Flags unaffected.
void h_loop(Cpu& c, const Insn& i) {
    const u64 m = kAddrMask[i.asize];
    const u64 n = (c.gpr[RCX] - 1) & m;
    c.gpr[RCX] = i.asize == 4 ? n : (c.gpr[RCX] & ~m) | n;  // ECX write zero-extends
    bool taken = n != 0;
    if (i.aux == 1) taken = taken && c.lf.zf();
    if (i.aux == 2) taken = taken && !c.lf.zf();
    if (taken) go(c, i, BranchKind::kJcc, i.imm);
}

template <class T, bool Mem>
T read_target(Cpu& c, const Insn& i) {
    if constexpr (Mem) return c.mmu.read<T>(linear(c, i));
    else return reg_get<T>(c, i.ra);
}

template <class T, bool Mem>
void h_jmp_ind(Cpu& c, const Insn& i) {
    go(c, i, BranchKind::kJmpInd, read_target<T, Mem>(c, i));
}

template <class T>
void h_call_rel(Cpu& c, const Insn& i) {
    push<T>(c, T(i.next));
    go(c, i, BranchKind::kCallRel, i.imm);
}

template <class T, bool Mem>
void h_call_ind(Cpu& c, const Insn& i) {
    const T target = read_target<T, Mem>(c, i);  // read before the push moves RSP
    if (c.code_bits == CodeBits::k64 && !is_canonical(u64(target)))
        raise_fault(vec::GP, 0);
    push<T>(c, T(i.next));
    go(c, i, BranchKind::kCallInd, target);
}

/// RET / RET imm16: pop the return address, then release imm16 bytes (SDM Vol. 2, RET).
template <class T>
void h_ret(Cpu& c, const Insn& i) {
    const u64 mask = kAddrMask[c.stack_bytes];
    const u64 sp = c.gpr[RSP] & mask;
    const T target = c.mmu.read<T>(linear(c, SS, sp));
    if (c.code_bits == CodeBits::k64 && !is_canonical(u64(target)))
        raise_fault(vec::GP, 0);
    c.gpr[RSP] = (c.gpr[RSP] & ~mask) | ((sp + sizeof(T) + i.imm) & mask);
    go(c, i, BranchKind::kRet, target);
}

u64 size_mask(u8 bytes) { return kAddrMask[bytes]; }

bool bind_rel_target(const DecodedInsn& d, Insn& out) {
    if (d.nops != 1 || !is_imm(d.ops[0])) return false;
    out.imm = u64(d.ops[0].imm) & size_mask(branch_size(d));
    out.ends_block = true;
    return true;
}

bool bind_jmp(const DecodedInsn& d, Insn& out) {
    if (d.nops != 1) return false;
    if (is_imm(d.ops[0])) {
        if (!bind_rel_target(d, out)) return false;
        out.fn = out.imm == d.address ? h_jmp_self : h_jmp_rel;
        return true;
    }
    // Far forms (EA, FF /5) are Op::LJMP (isa/sem_far.cpp); this is FF /4.
    const u8 size = branch_size(d);
    out.ends_block = true;
    const bool mem = is_mem(d.ops[0]);
    if (mem) bind_mem(d, d.ops[0], out);
    else out.ra = reg_off(d.ops[0]);
    out.fn = pick_wide(size, [&](auto t) -> Handler {
        using T = decltype(t);
        return mem ? &h_jmp_ind<T, true> : &h_jmp_ind<T, false>;
    });
    return true;
}

bool bind_call(const DecodedInsn& d, Insn& out) {
    if (d.nops != 1) return false;
    const u8 size = branch_size(d);
    out.ends_block = true;
    if (is_imm(d.ops[0])) {
        if (!bind_rel_target(d, out)) return false;
        out.fn = pick_wide(size, [&](auto t) -> Handler { return &h_call_rel<decltype(t)>; });
        return true;
    }
    // Far forms (9A, FF /3) are Op::LCALL (isa/sem_far.cpp); this is FF /2.
    const bool mem = is_mem(d.ops[0]);
    if (mem) bind_mem(d, d.ops[0], out);
    else out.ra = reg_off(d.ops[0]);
    out.fn = pick_wide(size, [&](auto t) -> Handler {
        using T = decltype(t);
        return mem ? &h_call_ind<T, true> : &h_call_ind<T, false>;
    });
    return true;
}

bool bind_ret(const DecodedInsn& d, Insn& out) {
    out.imm = d.nops == 1 ? u64(d.ops[0].imm) & 0xFFFF : 0;
    out.ends_block = true;
    out.fn = pick_wide(branch_size(d), [&](auto t) -> Handler { return &h_ret<decltype(t)>; });
    return true;
}

template <u8 CC>
bool bind_jcc(const DecodedInsn& d, Insn& out) {
    out.fn = h_jcc;
    out.aux = CC;
    return bind_rel_target(d, out);
}

bool bind_jcxz(const DecodedInsn& d, Insn& out) {
    out.fn = h_jcxz;
    return bind_rel_target(d, out);
}

template <u8 Kind>
bool bind_loop(const DecodedInsn& d, Insn& out) {
    out.fn = h_loop;
    out.aux = Kind;
    return bind_rel_target(d, out);
}

}  // namespace

void register_control(BinderTable& t) {
    t.add(Op::JMP, bind_jmp);
    t.add(Op::CALL, bind_call);
    t.add(Op::RET, bind_ret);
    t.add(Op::JO, bind_jcc<kO>);
    t.add(Op::JNO, bind_jcc<kNO>);
    t.add(Op::JB, bind_jcc<kB>);
    t.add(Op::JAE, bind_jcc<kAE>);
    t.add(Op::JE, bind_jcc<kE>);
    t.add(Op::JNE, bind_jcc<kNE>);
    t.add(Op::JBE, bind_jcc<kBE>);
    t.add(Op::JA, bind_jcc<kA>);
    t.add(Op::JS, bind_jcc<kS>);
    t.add(Op::JNS, bind_jcc<kNS>);
    t.add(Op::JP, bind_jcc<kP>);
    t.add(Op::JNP, bind_jcc<kNP>);
    t.add(Op::JL, bind_jcc<kL>);
    t.add(Op::JGE, bind_jcc<kGE>);
    t.add(Op::JLE, bind_jcc<kLE>);
    t.add(Op::JG, bind_jcc<kG>);
    t.add(Op::JCXZ, bind_jcxz);
    t.add(Op::JECXZ, bind_jcxz);
    t.add(Op::JRCXZ, bind_jcxz);
    t.add(Op::LOOP, bind_loop<0>);
    t.add(Op::LOOPE, bind_loop<1>);
    t.add(Op::LOOPNE, bind_loop<2>);
}

}  // namespace pmusim
