// Stack instructions: PUSH POP PUSHA POPA PUSHF POPF ENTER LEAVE.
// SDM Vol. 2 (instruction pages); Vol. 1, 6.2 (stacks).
#include "isa/bind.h"
#include "sim/fault.h"

namespace pmusim {

namespace {

/// Operand size of stack pushes and pops: 64 bits in 64-bit mode unless 66 selects
/// 16 (a 32-bit push cannot be encoded there), else the operand size (SDM Vol. 1, 6.2.5).
u8 stack_op_size(const DecodedInsn& d) {
    if (d.mode == CodeBits::k64) return d.pfx.opsize ? 2 : 8;
    return d.opsize;
}

template <class T>
void h_push_reg(Cpu& c, const Insn& i) { push<T>(c, reg_get<T>(c, i.ra)); }  // PUSH rSP pushes the old value
template <class T>
void h_push_mem(Cpu& c, const Insn& i) { push<T>(c, c.mmu.read<T>(linear(c, i))); }
template <class T>
void h_push_imm(Cpu& c, const Insn& i) { push<T>(c, T(i.imm)); }

/// PUSH Sreg: recent Intel processors store only the 16-bit selector and leave the
/// rest of a wider stack slot unmodified (SDM Vol. 2, PUSH, Operation note).
template <class T>
void h_push_sreg(Cpu& c, const Insn& i) {
    const u64 mask = kAddrMask[c.stack_bytes];
    const u64 sp = (c.gpr[RSP] - sizeof(T)) & mask;
    c.mmu.write<u16>(linear(c, SS, sp), c.seg[i.aux].selector);
    c.gpr[RSP] = (c.gpr[RSP] & ~mask) | sp;
}

bool bind_push(const DecodedInsn& d, Insn& out) {
    if (d.nops != 1) return false;
    const DecodedOperand& a = d.ops[0];
    const u8 size = stack_op_size(d);
    if (a.kind == DecodedOperand::kSeg) {
        out.aux = a.reg;
        out.fn = pick_wide(size, [&](auto t) -> Handler { return &h_push_sreg<decltype(t)>; });
    } else if (is_reg(a)) {
        out.ra = reg_off(a.reg);
        out.fn = pick_wide(size, [&](auto t) -> Handler { return &h_push_reg<decltype(t)>; });
    } else if (is_mem(a)) {
        bind_mem(d, a, out);
        out.fn = pick_wide(size, [&](auto t) -> Handler { return &h_push_mem<decltype(t)>; });
    } else {
        out.imm = u64(a.imm);  // sign-extended by the decoder; truncated to the push size
        out.fn = pick_wide(size, [&](auto t) -> Handler { return &h_push_imm<decltype(t)>; });
    }
    return true;
}

template <class T>
void h_pop_reg(Cpu& c, const Insn& i) {
    const T v = pop<T>(c);
    reg_set<T>(c, i.ra, v);  // POP rSP: the popped value wins over the increment
}

/// POP m: the address is computed after rSP is incremented (SDM Vol. 2, POP); a
/// faulting store leaves rSP unchanged.
template <class T>
void h_pop_mem(Cpu& c, const Insn& i) {
    const u64 old_sp = c.gpr[RSP];
    const T v = pop<T>(c);
    try {
        c.mmu.write<T>(linear(c, i), v);
    } catch (...) {
        c.gpr[RSP] = old_sp;
        throw;
    }
}

bool bind_pop(const DecodedInsn& d, Insn& out) {
    if (d.nops != 1) return false;
    const DecodedOperand& a = d.ops[0];
    const u8 size = stack_op_size(d);
    // POP Sreg is Op::kPopSreg (isa/sem_segment.cpp).
    if (is_reg(a)) {
        out.ra = reg_off(a.reg);
        out.fn = pick_wide(size, [&](auto t) -> Handler { return &h_pop_reg<decltype(t)>; });
    } else if (is_mem(a)) {
        bind_mem(d, a, out);
        out.fn = pick_wide(size, [&](auto t) -> Handler { return &h_pop_mem<decltype(t)>; });
    } else {
        return false;
    }
    return true;
}

/// PUSHA/PUSHAD: AX CX DX BX (original SP) BP SI DI. Not valid in 64-bit mode.
template <class T>
void h_pusha(Cpu& c, const Insn&) {
    const u64 saved_sp = c.gpr[RSP];
    const T sp = T(c.gpr[RSP]);
    try {
        for (u8 r = RAX; r <= RDI; ++r) push<T>(c, r == RSP ? sp : T(c.gpr[r]));
    } catch (...) {
        c.gpr[RSP] = saved_sp;
        throw;
    }
}
/// POPA/POPAD: pops DI SI BP (skips SP) BX DX CX AX.
template <class T>
void h_popa(Cpu& c, const Insn&) {
    const u64 saved_sp = c.gpr[RSP];
    T v[8];
    try {
        for (int r = RDI; r >= RAX; --r) v[r] = pop<T>(c);
    } catch (...) {
        c.gpr[RSP] = saved_sp;
        throw;
    }
    for (u8 r = RAX; r <= RDI; ++r)
        if (r != RSP) reg_set<T>(c, reg_off(r), v[r]);
}


/// PUSHF/PUSHFD/PUSHFQ: the image has VM and RF cleared (SDM Vol. 2, PUSHF).
template <class T>
void h_pushf(Cpu& c, const Insn&) {
    push<T>(c, T(c.rflags() & ~(kVM | kRF)));
}

/// POPF/POPFD/POPFQ outside virtual-8086 mode (SDM Vol. 2, POPF, Operation):
/// VIP, VIF, VM and reserved bits are unaffected and RF is cleared; IOPL changes
/// only at CPL 0; IF only when CPL <= IOPL. A 16-bit POPF changes bits 15:0 only.
template <class T>
void h_popf(Cpu& c, const Insn&) {
    const u64 v = pop<T>(c);
    u64 changeable = kArithFlags | kTF | kDF | kNT | kAC | kID | kIF | kIOPL;
    const u64 cur = c.rflags();
    const unsigned iopl = unsigned((cur & kIOPL) >> 12);
    if (c.cpl != 0) changeable &= ~kIOPL;
    if (c.cpl > iopl) changeable &= ~kIF;
    if constexpr (sizeof(T) == 2) changeable &= 0xFFFF;
    c.set_rflags(((cur & ~changeable) | (v & changeable)) & ~kRF);
}

bool bind_popf(const DecodedInsn& d, Insn& out) {
    out.ends_block = true;  // TF/IF changes take effect at the next boundary
    out.fn = pick_wide(stack_op_size(d), [&](auto t) -> Handler { return &h_popf<decltype(t)>; });
    return true;
}
bool bind_pushf(const DecodedInsn& d, Insn& out) {
    out.fn = pick_wide(stack_op_size(d), [&](auto t) -> Handler { return &h_pushf<decltype(t)>; });
    return true;
}

/// ENTER imm16, imm8 (SDM Vol. 2, ENTER, Operation): push rBP, copy NestingLevel-1
/// frame pointers from the old frame, push the new frame pointer, set rBP, and
/// allocate imm16 bytes. The frame-pointer copies use the stack-address size.
template <class T>
void h_enter(Cpu& c, const Insn& i) {
    const u64 saved_sp = c.gpr[RSP], saved_bp = c.gpr[RBP];
    const u64 mask = kAddrMask[c.stack_bytes];
    const unsigned level = unsigned(i.aux) & 31;
    try {
        push<T>(c, T(c.gpr[RBP]));
        const T frame = T(c.gpr[RSP] & mask);
        if (level > 0) {
            u64 bp = c.gpr[RBP];
            for (unsigned k = 1; k < level; ++k) {
                bp = (bp & ~mask) | ((bp - sizeof(T)) & mask);
                push<T>(c, c.mmu.read<T>(linear(c, SS, bp & mask)));
            }
            push<T>(c, frame);
        }
        // The new stack pointer must be writable: probe the lowest allocated byte.
        const u64 new_sp = (c.gpr[RSP] - i.imm) & mask;
        if (i.imm) c.mmu.write<u8>(linear(c, SS, new_sp), c.mmu.read<u8>(linear(c, SS, new_sp)));
        reg_set<T>(c, reg_off(RBP), frame);
        c.gpr[RSP] = (c.gpr[RSP] & ~mask) | new_sp;
    } catch (...) {
        c.gpr[RSP] = saved_sp;
        c.gpr[RBP] = saved_bp;
        throw;
    }
}

bool bind_enter(const DecodedInsn& d, Insn& out) {
    if (d.nops != 2) return false;
    out.imm = u64(d.ops[0].imm) & 0xFFFF;
    out.aux = u8(d.ops[1].imm);
    out.fn = pick_wide(stack_op_size(d), [&](auto t) -> Handler { return &h_enter<decltype(t)>; });
    return true;
}

/// LEAVE: rSP = rBP (stack-address size), then POP rBP (operand size).
template <class T>
void h_leave(Cpu& c, const Insn&) {
    const u64 mask = kAddrMask[c.stack_bytes];
    const u64 sp = c.gpr[RBP] & mask;
    const T v = c.mmu.read<T>(linear(c, SS, sp));
    c.gpr[RSP] = (c.gpr[RSP] & ~mask) | ((sp + sizeof(T)) & mask);
    reg_set<T>(c, reg_off(RBP), v);
}

bool bind_leave(const DecodedInsn& d, Insn& out) {
    out.fn = pick_wide(stack_op_size(d), [&](auto t) -> Handler { return &h_leave<decltype(t)>; });
    return true;
}

}  // namespace

void register_stack(BinderTable& t) {
    t.add(Op::PUSH, bind_push);
    t.add(Op::POP, bind_pop);
    t.add(Op::PUSHAW, bind_fixed<&h_pusha<u16>>);
    t.add(Op::PUSHAL, bind_fixed<&h_pusha<u32>>);
    t.add(Op::POPAW, bind_fixed<&h_popa<u16>>);
    t.add(Op::POPAL, bind_fixed<&h_popa<u32>>);
    t.add(Op::PUSHF, bind_pushf);
    t.add(Op::PUSHFD, bind_pushf);
    t.add(Op::PUSHFQ, bind_pushf);
    t.add(Op::POPF, bind_popf);
    t.add(Op::POPFD, bind_popf);
    t.add(Op::POPFQ, bind_popf);
    t.add(Op::ENTER, bind_enter);
    t.add(Op::LEAVE, bind_leave);
}

}  // namespace pmusim
