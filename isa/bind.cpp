#include "isa/bind.h"

#include "sim/fault.h"

namespace pmusim {

namespace {

const BinderTable& table() {
    static const BinderTable t = [] {
        BinderTable b;
        register_alu(b);
        register_muldiv(b);
        register_shift(b);
        register_bitops(b);
        register_datamov(b);
        register_stack(b);
        register_string(b);
        register_control(b);
        register_misc(b);
        register_system(b);
        register_io(b);
        register_far(b);
        register_segment(b);
        register_x87(b);
        return b;
    }();
    return t;
}

/// SDM Vol. 2, LOCK: only these instructions, and only with a memory destination.
bool lock_allowed(const DecodedInsn& d) {
    switch (d.op) {
        case Op::ADD: case Op::ADC: case Op::AND: case Op::BTC: case Op::BTR: case Op::BTS:
        case Op::CMPXCHG: case Op::CMPXCHG8B: case Op::CMPXCHG16B: case Op::DEC: case Op::INC:
        case Op::NEG: case Op::NOT: case Op::OR: case Op::SBB: case Op::SUB: case Op::XOR:
        case Op::XADD: case Op::XCHG:
            return d.nops > 0 && is_mem(d.ops[0]);
        default:
            return false;
    }
}

void h_unimplemented(Cpu& c, const Insn& i) {
    ++c.missing.executions[i.imm];
    raise_fault(vec::UD);
}

}  // namespace

void h_ud(Cpu&, const Insn&) { raise_fault(vec::UD); }

void bind_mem(const DecodedInsn& d, const DecodedOperand& m, Insn& out) {
    out.asize = d.addrsize;
    out.scale = m.scale_log2;
    out.index = m.index;
    if (m.rip_relative) {
        // Relative to the next instruction (SDM Vol. 2, 2.2.1.6).
        out.base = kZeroReg;
        out.disp = i64(d.address + d.length) + m.disp;
    } else {
        out.base = m.base;
        out.disp = m.disp;
    }
    if (m.seg != kNoSeg) out.seg = m.seg;
    else if (d.pfx.seg != kNoSeg) out.seg = d.pfx.seg;
    else out.seg = (m.base == RSP || m.base == RBP) ? SS : DS;
}

void bind(const DecodedInsn& d, Insn& out, MissingInsnReport& missing) {
    out = Insn{};
    out.next = d.address + d.length;
    out.len = d.length;
    out.op = d.op;
    out.osize = d.opsize;
    out.asize = d.addrsize;
    Binder b = d.op == Op::kUnknown ? nullptr : table().fn[size_t(d.op)];
    if (d.length == 0) {
        out.fn = h_ud;  // not an instruction at all (SDM Vol. 2, UD: invalid opcode)
    } else if (!b) {
        out.fn = h_unimplemented;
        out.imm = missing.intern(d.text.substr(0, d.text.find(' ')));
    } else if (d.pfx.lock && !lock_allowed(d)) {
        out.fn = h_ud;  // SDM Vol. 2, LOCK: #UD when not allowed
    } else if (!b(d, out)) {
        const u64 keep_next = out.next;
        out = Insn{};
        out.next = keep_next;
        out.len = d.length;
        out.op = d.op;
        out.fn = h_ud;
    } else if (!out.fn) {
        // A valid form whose semantics are not modelled yet.
        out.fn = h_unimplemented;
        out.imm = missing.intern(d.text.substr(0, d.text.find(' ')));
    }
}

}  // namespace pmusim

namespace pmusim {

bool bind_two(const DecodedInsn& d, Insn& out, Form& form) {
    if (d.nops != 2) return false;
    const DecodedOperand &a = d.ops[0], &b = d.ops[1];
    if (is_reg(a)) {
        out.ra = reg_off(a);
        if (is_reg(b)) form = Form::kRR, out.rb = reg_off(b);
        else if (is_mem(b)) form = Form::kRM, bind_mem(d, b, out);
        else if (is_imm(b)) form = Form::kRI, out.imm = u64(b.imm);
        else return false;
    } else if (is_mem(a)) {
        bind_mem(d, a, out);
        if (is_reg(b)) form = Form::kMR, out.rb = reg_off(b);
        else if (is_imm(b)) form = Form::kMI, out.imm = u64(b.imm);
        else return false;
    } else {
        return false;
    }
    return true;
}

}  // namespace pmusim
