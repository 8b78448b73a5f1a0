// The x87 control instructions FNINIT FNSTCW FLDCW FNSTSW (SDM Vol. 2). The x87
// register stack and arithmetic are not modelled, so no x87 exception can be
// pending and these instructions never raise #MF.
#include "isa/bind.h"

namespace pmusim {

namespace {

/// x87 instructions raise #NM when CR0.EM or CR0.TS is set (SDM Vol. 3, 2.5, Table 2-2).
inline void check_x87(const Cpu& c) {
    if (c.cr0 & (cr0::kEM | cr0::kTS)) raise_fault(vec::NM);
}

/// FNINIT: CW = 037FH, SW = 0, TW = FFFFH (SDM Vol. 2, FINIT/FNINIT).
void h_fninit(Cpu& c, const Insn&) {
    check_x87(c);
    c.fpu_cw = 0x037F;
    c.fpu_sw = 0;
    c.fpu_tw = 0xFFFF;
}
void h_fnstcw(Cpu& c, const Insn& i) {
    check_x87(c);
    c.mmu.write<u16>(linear(c, i), c.fpu_cw);
}
void h_fldcw(Cpu& c, const Insn& i) {
    check_x87(c);
    c.fpu_cw = c.mmu.read<u16>(linear(c, i));
}
/// FNSTSW AX or m2byte (aux = 1 for memory).
void h_fnstsw(Cpu& c, const Insn& i) {
    check_x87(c);
    if (i.aux) c.mmu.write<u16>(linear(c, i), c.fpu_sw);
    else reg_set<u16>(c, 0, c.fpu_sw);
}

template <Handler H>
bool bind_m16(const DecodedInsn& d, Insn& out) {
    if (d.nops != 1) return false;
    if (is_mem(d.ops[0])) {
        bind_mem(d, d.ops[0], out);
        out.aux = 1;
    } else if (!(is_reg(d.ops[0]) && d.ops[0].reg == RAX && H == h_fnstsw)) {
        return false;
    }
    out.fn = H;
    return true;
}

}  // namespace

void register_x87(BinderTable& t) {
    t.add(Op::FNINIT, bind_fixed<h_fninit>);
    t.add(Op::FNSTCW, bind_m16<h_fnstcw>);
    t.add(Op::FLDCW, bind_m16<h_fldcw>);
    t.add(Op::FNSTSW, bind_m16<h_fnstsw>);
}

}  // namespace pmusim
