// Segment descriptors and segment-register loads (SDM Vol. 3, ch. 3 and 5).
#pragma once
#include "sim/cpu.h"

namespace pmusim {

/// A descriptor as read from the GDT or LDT (16 bytes for system descriptors in IA-32e mode).
struct Descriptor {
    u64 lo = 0, hi = 0;
    u32 attr() const { return u32((lo >> 40) & 0xFF) | u32(((lo >> 52) & 0xF) << 12); }
    unsigned type() const { return unsigned(lo >> 40) & 0xF; }
    bool s() const { return (lo >> 44) & 1; }
    unsigned dpl() const { return unsigned(lo >> 45) & 3; }
    bool present() const { return (lo >> 47) & 1; }
    bool is_code() const { return s() && (type() & 8); }
    bool is_data() const { return s() && !(type() & 8); }
    u64 base() const { return ((lo >> 16) & 0xFFFFFF) | (((lo >> 56) & 0xFF) << 24); }
    u64 system_base64() const { return base() | (hi << 32); }
    u32 limit() const {
        const u32 raw = u32(lo & 0xFFFF) | u32(((lo >> 48) & 0xF) << 16);
        return (lo & (1ull << 55)) ? (raw << 12) | 0xFFF : raw;  // G: 4 KiB granularity
    }
    // Gate fields (SDM Vol. 3, 6.11 and 6.14.1).
    u16 gate_selector() const { return u16(lo >> 16); }
    u64 gate_offset() const { return (lo & 0xFFFF) | (((lo >> 48) & 0xFFFF) << 16) | (hi << 32); }
    unsigned gate_ist() const { return unsigned(lo >> 32) & 7; }
    unsigned gate_params() const { return unsigned(lo >> 32) & 0x1F; }
};

/// Reads the descriptor for `sel` from the GDT or LDT. `wide` reads 16 bytes.
/// Raises #GP(sel & ~3) (or `vector`) if the selector lies beyond the table limit.
Descriptor read_descriptor(Cpu& c, u16 sel, bool wide = false, u8 vector = vec::GP);
/// Sets the accessed bit of the descriptor for `sel` in memory if it is clear.
void set_accessed(Cpu& c, u16 sel, Descriptor& d);
/// Descriptor cache contents for `sel` and `d`.
SegmentCache to_cache(u16 sel, const Descriptor& d);
/// A null (unusable) segment cache for selector `sel`.
SegmentCache null_segment(u16 sel);

/// MOV/POP Sreg, LDS..LSS: loads segment register `sreg` (not CS) with the
/// protection checks of SDM Vol. 2, MOV (Operation) in protected mode, and
/// base = selector * 16 in real mode. Throws GuestFault.
void load_segment(Cpu& c, u8 sreg, u16 sel);

/// Real-mode style load of any segment register (base = sel << 4, limit and
/// attributes kept as in the hidden cache).
void load_segment_real(Cpu& c, u8 sreg, u16 sel);

/// After a return to an outer privilege level: data segment registers that the
/// new CPL may not use are made null (SDM Vol. 2, RET/IRET, "FOR each SegReg").
void invalidate_outer_segments(Cpu& c);

/// Raises #SS(`error`) unless bytes [off, off+size) lie within stack segment `ss`
/// (expand-up or expand-down; SDM Vol. 3, 5.3). Used for pushes made while
/// switching stacks, which must fit the new stack before anything is committed.
void check_stack_room(const SegmentCache& ss, u64 off, unsigned size, u32 error);

/// Error code of a selector-related fault (SDM Vol. 3, 6.13): index, TI; EXT in bit 0.
inline u32 sel_error(u16 sel, bool ext = false) { return u32(sel & 0xFFFC) | (ext ? 1 : 0); }

}  // namespace pmusim
