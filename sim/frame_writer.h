// Writing an interrupt or call frame onto a stack before any register is committed.
#pragma once
#include "sim/segmentation.h"

namespace pmusim {

/// Pushes values onto a stack given by base, offset and wrap mask, with the page
/// rights of the privilege level the stack belongs to, and (in legacy modes) the
/// stack segment's limit checked for room (#SS(ss_error), SDM Vol. 2, INT n and
/// CALL). Nothing but memory changes, so a fault leaves the processor state intact
/// for the caller; the caller commits `sp` afterwards.
struct FrameWriter {
    Cpu& c;
    bool user;                        ///< page rights: the new CPL is 3
    u64 sp;                           ///< stack offset, decremented before each write
    u64 mask;                         ///< 0xFFFF, 0xFFFFFFFF or ~0
    u64 base;                         ///< stack segment base
    const SegmentCache* ss = nullptr; ///< legacy modes: the segment to check for room
    u32 ss_error = 0;                 ///< #SS error code when the frame does not fit

    /// Pushes the low `width` (2, 4 or 8) bytes of `v`.
    void push(unsigned width, u64 v) {
        sp = (sp - width) & mask;
        if (ss) check_stack_room(*ss, sp, width, ss_error);
        const u64 lin = (base + sp) & c.lin_mask;
        if (width == 2) c.mmu.write_as<u16>(user, lin, u16(v));
        else if (width == 4) c.mmu.write_as<u32>(user, lin, u32(v));
        else c.mmu.write_as<u64>(user, lin, v);
    }
};

}  // namespace pmusim
