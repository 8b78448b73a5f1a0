// Binding: turning a DecodedInsn into an executable Insn (handler + resolved operands).
#pragma once
#include "isa/operands.h"

namespace pmusim {

/// Fills `out` for a decoded instruction of a family. Returns false when the
/// operand form is invalid for the instruction (the caller then binds #UD); leaves
/// out.fn null for a valid form that is not modelled yet (reported as missing).
using Binder = bool (*)(const DecodedInsn& d, Insn& out);

/// One binder per Op. Instruction families register theirs (isa/sem_*.cpp).
struct BinderTable {
    Binder fn[size_t(Op::kCount)] = {};
    void add(Op op, Binder b) { fn[size_t(op)] = b; }
};

void register_alu(BinderTable&);
void register_muldiv(BinderTable&);
void register_shift(BinderTable&);
void register_bitops(BinderTable&);
void register_datamov(BinderTable&);
void register_stack(BinderTable&);
void register_string(BinderTable&);
void register_control(BinderTable&);
void register_misc(BinderTable&);
void register_system(BinderTable&);
void register_io(BinderTable&);
void register_far(BinderTable&);
void register_segment(BinderTable&);
void register_x87(BinderTable&);

/// Builds the executable record for `d`. Never fails: undecodable, invalid or
/// unimplemented instructions get a handler raising #UD (the latter are counted
/// in `missing`).
void bind(const DecodedInsn& d, Insn& out, MissingInsnReport& missing);

// ---- helpers for binders -------------------------------------------------
/// Byte offset in Cpu::gpr of a register operand (AH..BH are byte 1 of RAX..RBX).
inline u16 reg_off(const DecodedOperand& o) { return u16(o.reg * 8 + (o.high8 ? 1 : 0)); }
inline u16 reg_off(u8 gpr) { return u16(gpr * 8); }
/// Resolves a memory operand into out.base/index/scale/disp/seg/asize, with the
/// default segment rule (SS for rBP/rSP bases, else DS; SDM Vol. 1, 3.7.4) and
/// RIP-relative displacements made absolute.
void bind_mem(const DecodedInsn& d, const DecodedOperand& m, Insn& out);
/// Handler raising #UD.
void h_ud(Cpu& c, const Insn& i);

/// Like pick_size but for 16/32/64-bit operands only.
template <class F>
inline Handler pick_wide(unsigned size, F f) {
    switch (size) {
        case 2: return f(u16{});
        case 4: return f(u32{});
        case 8: return f(u64{});
        default: return nullptr;
    }
}

/// Binder for instructions without operands to resolve.
template <Handler H, bool EndsBlock = false>
bool bind_fixed(const DecodedInsn&, Insn& out) {
    out.fn = H;
    out.ends_block = EndsBlock;
    return true;
}

inline bool is_reg(const DecodedOperand& o) { return o.kind == DecodedOperand::kReg; }
inline bool is_mem(const DecodedOperand& o) { return o.kind == DecodedOperand::kMem; }
inline bool is_imm(const DecodedOperand& o) { return o.kind == DecodedOperand::kImm; }

}  // namespace pmusim

namespace pmusim {

/// Operand forms of two-operand instructions: destination a, source b.
/// R = register, M = memory, I = immediate.
enum class Form : u8 { kRR, kRM, kMR, kRI, kMI };

/// Binds the operands of a (dst, src) instruction: register offsets into ra/rb,
/// the memory operand, the immediate (truncated to the destination size, sign-extended
/// by the decoder). Returns false for a form the instruction cannot have.
bool bind_two(const DecodedInsn& d, Insn& out, Form& form);

/// Chooses the handler H<T, form> for a bound two-operand instruction.
template <class T, template <class, Form> class H>
Handler form_handler(Form f) {
    switch (f) {
        case Form::kRR: return &H<T, Form::kRR>::run;
        case Form::kRM: return &H<T, Form::kRM>::run;
        case Form::kMR: return &H<T, Form::kMR>::run;
        case Form::kRI: return &H<T, Form::kRI>::run;
        default: return &H<T, Form::kMI>::run;
    }
}

/// Reads the destination operand a of form F (memory address returned in `addr`).
template <class T, Form F>
inline T load_a(Cpu& c, const Insn& i, SegAddr& addr) {
    if constexpr (F == Form::kMR || F == Form::kMI) {
        addr = linear(c, i);
        return c.mmu.read<T>(addr);
    } else {
        return reg_get<T>(c, i.ra);
    }
}
/// Reads the source operand b of form F.
template <class T, Form F>
inline T load_b(Cpu& c, const Insn& i) {
    if constexpr (F == Form::kRR || F == Form::kMR) return reg_get<T>(c, i.rb);
    else if constexpr (F == Form::kRM) return c.mmu.read<T>(linear(c, i));
    else return T(i.imm);
}
/// Writes the destination operand a of form F.
template <class T, Form F>
inline void store_a(Cpu& c, const Insn& i, const SegAddr& addr, T v) {
    if constexpr (F == Form::kMR || F == Form::kMI) c.mmu.write<T>(addr, v);
    else reg_set<T>(c, i.ra, v);
}

}  // namespace pmusim
