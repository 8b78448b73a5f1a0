// The pre-decoded instruction record the interpreter executes.
#pragma once
#include "isa/decoded.h"

namespace pmusim {

struct Cpu;
struct Insn;
/// Executes one instruction. The run loop sets Cpu::rip to the next instruction
/// before the call; control transfers overwrite it.
using Handler = void (*)(Cpu&, const Insn&);

/// Compact, fixed-size record built once per decoded instruction and kept in the
/// decode cache. Everything a handler needs is resolved at decode time: register
/// byte offsets, the memory operand's parts with RIP-relative displacements folded
/// into absolute values, branch targets, and immediates.
struct Insn {
    Handler fn = nullptr;
    u64 next = 0;     ///< offset (RIP) of the following instruction
    u64 imm = 0;      ///< immediate, branch target, or per-family constant
    i64 disp = 0;     ///< memory displacement (absolute for RIP-relative operands)
    u16 ra = 0;       ///< byte offset in Cpu::gpr of register operand a (destination)
    u16 rb = 0;       ///< byte offset of register operand b (source)
    u8 base = kZeroReg, index = kZeroReg, scale = 0;  ///< memory operand: base + (index << scale)
    u8 seg = DS;      ///< segment of the memory operand (override or default)
    u8 len = 0;       ///< instruction length in bytes
    u8 asize = 4;     ///< address size in bytes (2, 4, 8)
    u8 osize = 4;     ///< operand size in bytes
    u8 aux = 0;       ///< per-family small field (condition code, second count, ...)
    bool ends_block = false;  ///< control transfer or state change: ends a decoded block
    Op op = Op::kUnknown;

    u64 addr() const { return next - len; }
};

}  // namespace pmusim
