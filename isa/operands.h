// Inline operand access used by instruction handlers (the hot path).
#pragma once
#include <cstring>

#include "isa/insn.h"
#include "sim/cpu.h"

namespace pmusim {

template <class T>
inline T reg_get(const Cpu& c, u16 off) {
    T v;
    std::memcpy(&v, reinterpret_cast<const u8*>(c.gpr) + off, sizeof(T));
    return v;
}
/// Register write with the SDM rule that 32-bit results zero-extend to 64 bits
/// and 8/16-bit results leave the other bits alone (SDM Vol. 1, 3.4.1.1).
template <class T>
inline void reg_set(Cpu& c, u16 off, T v) {
    if constexpr (sizeof(T) == 4) {
        c.gpr[off >> 3] = v;
    } else {
        std::memcpy(reinterpret_cast<u8*>(c.gpr) + off, &v, sizeof(T));
    }
}

/// Effective address (offset within the segment), wrapped to the address size.
inline u64 effective_address(const Cpu& c, const Insn& i) {
    return (c.gpr[i.base] + (c.gpr[i.index] << i.scale) + u64(i.disp)) & kAddrMask[i.asize];
}
/// Address `offset` in segment `seg` (SDM Vol. 3, 3.4: linear = segment base + offset),
/// marked for limit and type checks when the segment is not flat (Cpu::seg_check_mask).
inline SegAddr linear(const Cpu& c, u8 seg, u64 offset) {
    return SegAddr{(c.seg_base[seg] + offset) & c.lin_mask, offset, seg, bool((c.seg_check_mask >> seg) & 1)};
}
/// Address of the instruction's memory operand.
inline SegAddr linear(const Cpu& c, const Insn& i) { return linear(c, i.seg, effective_address(c, i)); }

/// Stack access (SDM Vol. 1, 6.2): SS-relative, stack pointer of Cpu::stack_bytes width.
template <class T>
inline void push(Cpu& c, T v) {
    const u64 mask = kAddrMask[c.stack_bytes];
    const u64 sp = (c.gpr[RSP] - sizeof(T)) & mask;
    c.mmu.write<T>(linear(c, SS, sp), v);
    c.gpr[RSP] = (c.gpr[RSP] & ~mask) | sp;
}
template <class T>
inline T pop(Cpu& c) {
    const u64 mask = kAddrMask[c.stack_bytes];
    const u64 sp = c.gpr[RSP] & mask;
    T v = c.mmu.read<T>(linear(c, SS, sp));
    c.gpr[RSP] = (c.gpr[RSP] & ~mask) | ((sp + sizeof(T)) & mask);
    return v;
}

/// Updates index register `reg` (rSI, rDI, rCX of string and I/O instructions)
/// within the address size: a 32-bit update zero-extends, a 16-bit one keeps bits
/// 63:16 (SDM Vol. 1, 3.4.1.1 and 3.3.7).
inline void set_index(Cpu& c, u8 reg, u64 v, u8 asize) {
    const u64 m = kAddrMask[asize];
    c.gpr[reg] = asize == 4 ? (v & m) : (c.gpr[reg] & ~m) | (v & m);
}

/// Size dispatch used by binders: calls f(T{}) for T of `size` bytes.
template <class F>
inline Handler pick_size(unsigned size, F f) {
    switch (size) {
        case 1: return f(u8{});
        case 2: return f(u16{});
        case 4: return f(u32{});
        case 8: return f(u64{});
        default: return nullptr;
    }
}

}  // namespace pmusim
