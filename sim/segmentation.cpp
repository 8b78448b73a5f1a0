#include "sim/segmentation.h"

#include "sim/fault.h"

namespace pmusim {

Descriptor read_descriptor(Cpu& c, u16 sel, bool wide, u8 vector) {
    const bool ldt = sel & 4;
    const u64 base = ldt ? c.ldtr.base : c.gdtr.base;
    const u32 limit = ldt ? c.ldtr.limit : c.gdtr.limit;
    const u32 off = sel & 0xFFF8;
    if ((ldt && (c.ldtr.attr & seg_attr::kUnusable)) || off + (wide ? 15u : 7u) > limit)
        raise_fault(vector, sel_error(sel));
    Descriptor d;
    d.lo = c.mmu.read_system<u64>((base + off) & c.lin_mask);
    if (wide) d.hi = c.mmu.read_system<u64>((base + off + 8) & c.lin_mask);
    return d;
}

void set_accessed(Cpu& c, u16 sel, Descriptor& d) {
    if (!d.s() || (d.lo & (1ull << 40))) return;
    d.lo |= 1ull << 40;
    const u64 base = (sel & 4) ? c.ldtr.base : c.gdtr.base;
    c.mmu.write_system<u8>((base + (sel & 0xFFF8) + 5) & c.lin_mask, u8(d.lo >> 40));
}

SegmentCache to_cache(u16 sel, const Descriptor& d) {
    SegmentCache s;
    s.selector = sel;
    s.base = d.base();
    s.limit = d.limit();
    s.attr = d.attr();
    return s;
}

SegmentCache null_segment(u16 sel) {
    SegmentCache s;
    s.selector = sel;
    s.base = 0;
    s.limit = 0;
    s.attr = seg_attr::kUnusable;
    return s;
}

void load_segment_real(Cpu& c, u8 sreg, u16 sel) {
    c.seg[sreg].selector = sel;
    c.seg[sreg].base = u64(sel) << 4;
    c.update_mode();
}

void load_segment(Cpu& c, u8 sreg, u16 sel) {
    if (!c.protected_mode()) return load_segment_real(c, sreg, sel);
    const unsigned rpl = sel & 3;
    if (sreg == SS) {
        if ((sel & 0xFFFC) == 0) {
            // 64-bit mode allows a null SS at CPL < 3 (SDM Vol. 2, MOV; Vol. 3, 5.4.1.1).
            if (!c.in_64bit_mode() || c.cpl == 3 || rpl != c.cpl) raise_fault(vec::GP, 0);
            c.seg[SS] = null_segment(sel);
            c.seg[SS].attr |= u32(c.cpl) << seg_attr::kDplShift;
            c.update_mode();
            return;
        }
        Descriptor d = read_descriptor(c, sel);
        if (rpl != c.cpl || !d.is_data() || !(d.type() & seg_attr::kWritable) || d.dpl() != c.cpl)
            raise_fault(vec::GP, sel_error(sel));
        if (!d.present()) raise_fault(vec::SS, sel_error(sel));
        set_accessed(c, sel, d);
        c.seg[SS] = to_cache(sel, d);
    } else {
        if ((sel & 0xFFFC) == 0) {
            c.seg[sreg] = null_segment(sel);
            c.update_mode();
            return;
        }
        Descriptor d = read_descriptor(c, sel);
        const bool readable_code = d.is_code() && (d.type() & seg_attr::kReadable);
        if (!d.is_data() && !readable_code) raise_fault(vec::GP, sel_error(sel));
        const bool conforming = d.is_code() && (d.type() & seg_attr::kConforming);
        if (!conforming && (rpl > d.dpl() || c.cpl > d.dpl())) raise_fault(vec::GP, sel_error(sel));
        if (!d.present()) raise_fault(vec::NP, sel_error(sel));
        set_accessed(c, sel, d);
        c.seg[sreg] = to_cache(sel, d);
    }
    c.update_mode();
}

void check_stack_room(const SegmentCache& ss, u64 off, unsigned size, u32 error) {
    const u64 last = off + size - 1;
    if (ss.attr & seg_attr::kExpandDown) {
        const u64 upper = (ss.attr & seg_attr::kDB) ? 0xFFFFFFFFull : 0xFFFFull;
        if (off <= ss.limit || last > upper) raise_fault(vec::SS, error);
    } else if (last > ss.limit || last < off) {
        raise_fault(vec::SS, error);
    }
}

void invalidate_outer_segments(Cpu& c) {
    for (u8 s : {ES, DS, FS, GS}) {
        const SegmentCache& sc = c.seg[s];
        if (sc.attr & seg_attr::kUnusable) continue;
        const bool conforming_code = (sc.attr & seg_attr::kS) && (sc.attr & seg_attr::kCode) &&
                                     (sc.attr & seg_attr::kConforming);
        if (!conforming_code && sc.dpl() < c.cpl) c.seg[s] = null_segment(0);
    }
    c.update_mode();
}

}  // namespace pmusim
