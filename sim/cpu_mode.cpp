// Derived state: operating mode, code and stack width, effective segment bases.
#include "sim/cpu.h"

namespace pmusim {

void Cpu::update_mode() {
    const CodeBits old_bits = code_bits;
    const u8 old_stack = stack_bytes;
    const bool ia32e = long_mode();
    const SegmentCache& cs = seg[CS];
    // SDM Vol. 3, 5.2.1 / 3.4.5: CS.L selects 64-bit mode when IA-32e mode is
    // active; otherwise CS.D selects 32-bit code (also in real mode, where the
    // descriptor cache keeps the D bit of the last protected-mode load).
    if (ia32e && (cs.attr & seg_attr::kL)) code_bits = CodeBits::k64;
    else code_bits = (cs.attr & seg_attr::kDB) ? CodeBits::k32 : CodeBits::k16;
    const bool is64 = code_bits == CodeBits::k64;
    stack_bytes = is64 ? 8 : (seg[SS].attr & seg_attr::kDB) ? 4 : 2;
    lin_mask = is64 ? ~0ull : 0xFFFFFFFFull;
    // In 64-bit mode the bases of CS, DS, ES and SS are treated as 0 (SDM Vol. 3, 3.4.4).
    for (u8 s = 0; s < 6; ++s) seg_base[s] = (is64 && s != FS && s != GS) ? 0 : seg[s].base;
    seg_base[kNoSeg] = 0;
    // Accesses need limit/type checks unless the segment is a present, writable,
    // expand-up data segment spanning 4 GiB (SDM Vol. 3, 5.3, 5.4); none in 64-bit mode.
    seg_check_mask = 0;
    if (!is64) {
        for (u8 s = 0; s < 6; ++s) {
            const u32 a = seg[s].attr;
            const bool flat_data = !(a & seg_attr::kUnusable) && (a & seg_attr::kS) && !(a & seg_attr::kCode) &&
                                   (a & seg_attr::kWritable) && !(a & seg_attr::kExpandDown) &&
                                   seg[s].limit == 0xFFFFFFFF;
            if (!flat_data) seg_check_mask |= u8(1u << s);
        }
    }
    mmu.set_long_mode(is64);
    mmu.set_user(cpl == 3);
    if (old_bits != code_bits || old_stack != stack_bytes) pending |= kPendingModeChange;
}

}  // namespace pmusim
