// NOP family, flag instructions, HLT, UD0/UD1/UD2, and the BCD adjustments
// DAA DAS AAA AAS AAM AAD (invalid in 64-bit mode). SDM Vol. 2 (instruction pages).
#include "isa/bind.h"
#include "sim/fault.h"

namespace pmusim {

namespace {

void h_nop(Cpu&, const Insn&) {}
void h_clc(Cpu& c, const Insn&) { c.lf.set_some(kCF, 0); }
void h_stc(Cpu& c, const Insn&) { c.lf.set_some(kCF, kCF); }
void h_cmc(Cpu& c, const Insn&) { c.lf.set_some(kCF, c.lf.cf() ? 0 : kCF); }
void h_cld(Cpu& c, const Insn&) { c.rflags_other &= ~kDF; }
void h_std(Cpu& c, const Insn&) { c.rflags_other |= kDF; }

/// HLT: privileged (#GP(0) at CPL > 0); stops the core at the next instruction.
void h_hlt(Cpu& c, const Insn& i) {
    if (c.cpl != 0) raise_fault(vec::GP, 0);
    c.pending |= kPendingHalt;
}

/// DAA/DAS (SDM Vol. 2, Operation sections); OF is undefined and cleared here.
template <bool Sub>
void h_decimal_adjust(Cpu& c, const Insn&) {
    const u8 old_al = u8(c.gpr[RAX]);
    const bool old_cf = c.lf.cf();
    u8 al = old_al;
    bool cf = false, af = false;
    if ((al & 0x0F) > 9 || c.lf.af()) {
        cf = old_cf || (Sub ? al < 6 : al > 0xF9);
        al = u8(Sub ? al - 6 : al + 6);
        af = true;
    }
    if (old_al > 0x99 || old_cf) {
        al = u8(Sub ? al - 0x60 : al + 0x60);
        cf = true;
    }
    reg_set<u8>(c, 0, al);
    c.lf.result_with<u8>(al, cf, false, af);
}

/// AAA/AAS: SF ZF PF OF undefined; pmusim derives SF ZF PF from the new AL and clears OF.
template <bool Sub>
void h_ascii_adjust(Cpu& c, const Insn&) {
    u16 ax = u16(c.gpr[RAX]);
    const bool adjust = (ax & 0x0F) > 9 || c.lf.af();
    // AAA: AX = AX + 106H. AAS: AX = AX - 6, then AH = AH - 1 (the first step's borrow
    // reaches AH too) (SDM Vol. 2, AAA/AAS Operation).
    if (adjust) ax = Sub ? u16(u16(ax - 6) - 0x100) : u16(ax + 0x106);
    ax &= 0xFF0F;
    reg_set<u16>(c, 0, ax);
    c.lf.result_with<u8>(u8(ax), adjust, false, adjust);
}

/// AAM imm8: AH = AL / imm8, AL = AL % imm8; #DE if imm8 = 0. AAD imm8: AL = AL + AH*imm8, AH = 0.
void h_aam(Cpu& c, const Insn& i) {
    const u8 base = u8(i.imm), al = u8(c.gpr[RAX]);
    if (base == 0) raise_fault(vec::DE);
    const u8 r = u8(al % base);
    reg_set<u16>(c, 0, u16(r | (u16(al / base) << 8)));
    c.lf.logic<u8>(r);
}
void h_aad(Cpu& c, const Insn& i) {
    const u8 al = u8(c.gpr[RAX]), ah = u8(c.gpr[RAX] >> 8);
    const u8 r = u8(al + ah * u8(i.imm));
    reg_set<u16>(c, 0, r);
    c.lf.logic<u8>(r);
}

/// AAM/AAD carry their base as an immediate; Capstone 4 omits it when it is 10.
template <Handler H>
bool bind_base(const DecodedInsn& d, Insn& out) {
    out.imm = d.nops == 1 ? u64(d.ops[0].imm) : 10;
    out.fn = H;
    return true;
}

}  // namespace

void register_misc(BinderTable& t) {
    // MFENCE/LFENCE/SFENCE order memory accesses; one core with no caches is always ordered.
    for (Op op : {Op::NOP, Op::PAUSE, Op::ENDBR32, Op::ENDBR64, Op::PREFETCH, Op::PREFETCHW,
                  Op::PREFETCHT0, Op::PREFETCHT1, Op::PREFETCHT2, Op::PREFETCHNTA, Op::MFENCE,
                  Op::LFENCE, Op::SFENCE})
        t.add(op, bind_fixed<h_nop>);
    t.add(Op::CLC, bind_fixed<h_clc>);
    t.add(Op::STC, bind_fixed<h_stc>);
    t.add(Op::CMC, bind_fixed<h_cmc>);
    t.add(Op::CLD, bind_fixed<h_cld>);
    t.add(Op::STD, bind_fixed<h_std>);
    t.add(Op::HLT, bind_fixed<h_hlt, true>);
    for (Op op : {Op::UD2, Op::UD2B, Op::UD0}) t.add(op, bind_fixed<h_ud>);
    t.add(Op::DAA, bind_fixed<h_decimal_adjust<false>>);
    t.add(Op::DAS, bind_fixed<h_decimal_adjust<true>>);
    t.add(Op::AAA, bind_fixed<h_ascii_adjust<false>>);
    t.add(Op::AAS, bind_fixed<h_ascii_adjust<true>>);
    t.add(Op::AAM, bind_base<h_aam>);
    t.add(Op::AAD, bind_base<h_aad>);
}

}  // namespace pmusim
