// Segment-register loads: MOV Sreg, POP Sreg, LDS LES LFS LGS LSS.
// SDM Vol. 2 (MOV, POP, LDS/LES/LFS/LGS/LSS); checks in sim/segmentation.cpp.
#include "isa/bind.h"
#include "sim/segmentation.h"

namespace pmusim {

namespace {

/// Loading SS holds interrupts (and later debug traps) for one instruction
/// (SDM Vol. 3, 6.8.3); the block ends so the run loop sees it.
inline void after_load(Cpu& c, const Insn& i) {
    if (i.aux == SS) c.pending |= kPendingShadow;
}

/// MOV Sreg, r/m16 (aux = segment; mem operand if base/index set via bind_mem, flag in imm).
void h_mov_sreg(Cpu& c, const Insn& i) {
    const u16 sel = i.imm ? c.mmu.read<u16>(linear(c, i)) : reg_get<u16>(c, i.ra);
    load_segment(c, i.aux, sel);
    after_load(c, i);
}

bool bind_mov_sreg(const DecodedInsn& d, Insn& out) {
    if (d.nops != 2 || d.ops[0].reg == CS || d.ops[0].reg > GS) return false;  // MOV CS: #UD
    out.aux = d.ops[0].reg;
    if (is_mem(d.ops[1])) {
        bind_mem(d, d.ops[1], out);
        out.imm = 1;
    } else if (is_reg(d.ops[1])) {
        out.ra = reg_off(d.ops[1].reg);
    } else {
        return false;
    }
    out.fn = h_mov_sreg;
    out.ends_block = true;
    return true;
}

/// POP Sreg: pops operand-size bytes, loads the low 16 bits; RSP commits after the load.
template <class T>
void h_pop_sreg(Cpu& c, const Insn& i) {
    const u64 saved = c.gpr[RSP];
    const u16 sel = u16(pop<T>(c));
    try {
        load_segment(c, i.aux, sel);
    } catch (...) {
        c.gpr[RSP] = saved;
        throw;
    }
    after_load(c, i);
}

bool bind_pop_sreg(const DecodedInsn& d, Insn& out) {
    if (d.nops != 1 || d.ops[0].reg == CS) return false;
    out.aux = d.ops[0].reg;
    const u8 size = d.mode == CodeBits::k64 ? (d.pfx.opsize ? 2 : 8) : d.opsize;
    out.fn = pick_wide(size, [&](auto t) -> Handler { return &h_pop_sreg<decltype(t)>; });
    out.ends_block = true;
    return true;
}

/// LDS/LES/LFS/LGS/LSS r, m16:16/32/64: offset into r, selector into the segment.
template <class T>
void h_load_far_pointer(Cpu& c, const Insn& i) {
    const SegAddr a = linear(c, i);
    const T off = c.mmu.read<T>(a);
    const u16 sel = c.mmu.read<u16>(a + sizeof(T));
    load_segment(c, i.aux, sel);
    reg_set<T>(c, i.ra, off);
    after_load(c, i);
}

template <u8 Seg>
bool bind_lxs(const DecodedInsn& d, Insn& out) {
    if (d.nops != 2 || !is_reg(d.ops[0]) || !is_mem(d.ops[1])) return false;
    out.aux = Seg;
    out.ra = reg_off(d.ops[0].reg);
    bind_mem(d, d.ops[1], out);
    out.fn = pick_wide(d.opsize, [&](auto t) -> Handler { return &h_load_far_pointer<decltype(t)>; });
    out.ends_block = true;
    return true;
}

}  // namespace

void register_segment(BinderTable& t) {
    t.add(Op::kMovToSreg, bind_mov_sreg);
    t.add(Op::kPopSreg, bind_pop_sreg);
    t.add(Op::LDS, bind_lxs<DS>);
    t.add(Op::LES, bind_lxs<ES>);
    t.add(Op::LFS, bind_lxs<FS>);
    t.add(Op::LGS, bind_lxs<GS>);
    t.add(Op::LSS, bind_lxs<SS>);
}

}  // namespace pmusim
