#include "sim/mmu.h"

#include "sim/cpu.h"

namespace pmusim {

Mmu::Mmu(MemoryBus& bus, EventBus& events)
    : bus_(bus), events_(events), code_pages_(bus.ram().page_count(), 0) {}

void Mmu::flush_tlb() {
    for (auto& set : tlbs_)
        for (TlbEntry& e : set) e = TlbEntry{};
}

void Mmu::flush_page(u64 lin) {
    for (auto& set : tlbs_) {
        TlbEntry& e = set[(lin >> 12) & (kTlbEntries - 1)];
        if (e.read_tag == (lin >> 12) || e.write_tag == (lin >> 12)) e = TlbEntry{};
    }
}

void Mmu::refresh_observation() {
    observe_ = events_.wants(EventKind::kMemAccess);
    flush_tlb();
}

void Mmu::check_canonical(u64 lin, u8 vector) const {
    // SDM Vol. 1, 3.3.7.1: bits 63:47 must be all equal in 64-bit mode.
    if (long_mode_ && !is_canonical(lin)) raise_fault(vector, 0);
}

void Mmu::check_segment(const SegAddr& a, unsigned size, bool write) const {
    // SDM Vol. 3, 5.3 (limit checking) and 5.4 (type checking); a violation is
    // #SS(0) for SS-relative accesses and #GP(0) for the others.
    const SegmentCache& s = cpu_->seg[a.seg];
    const u8 vector = a.seg == SS ? vec::SS : vec::GP;
    const u32 attr = s.attr;
    if (attr & seg_attr::kUnusable) raise_fault(vector, 0);
    const bool code = (attr & seg_attr::kS) && (attr & seg_attr::kCode);
    if (write && (code || !(attr & seg_attr::kWritable))) raise_fault(vector, 0);
    if (!write && code && !(attr & seg_attr::kReadable)) raise_fault(vector, 0);
    const u64 last = a.off + size - 1;
    if (!code && (attr & seg_attr::kExpandDown)) {
        const u64 upper = (attr & seg_attr::kDB) ? 0xFFFFFFFFull : 0xFFFFull;
        if (a.off <= s.limit || last > upper) raise_fault(vector, 0);
    } else if (last > s.limit || last < a.off) {
        raise_fault(vector, 0);
    }
}

u64 Mmu::translate(u64 lin, Access acc) {
    if (!cpu_ || !(cpu_->cr0 & cr0::kPG)) return lin & 0xFFFFFFFFFFFFull;
    const Translation t = walk(*cpu_, bus_, lin, acc, user_);
    return t.page_pa | (lin & kPageMask);
}

void Mmu::fill(u64 lin, u64 pa, bool writable) {
    if (observe_) return;
    const u64 pfn = pa / kPageSize;
    if (!bus_.page_is_ram(pfn)) return;
    TlbEntry& e = tlb_[(lin >> 12) & (kTlbEntries - 1)];
    if (e.read_tag != (lin >> 12)) e = TlbEntry{};
    e.read_tag = lin >> 12;
    if (writable && !is_code_page(pfn)) {
        e.write_tag = lin >> 12;
        e.write_host = bus_.ram().page_for_write(pfn);
        e.read_host = e.write_host;
    } else if (e.write_tag != (lin >> 12)) {
        e.read_host = bus_.ram().page_for_read(pfn);
    }
}

void Mmu::emit(u64 lin, unsigned size, bool write, u64 value) {
    Event e;
    e.kind = EventKind::kMemAccess;
    e.addr = lin;
    e.size = u8(size);
    e.write = write;
    e.value = value;
    events_.emit(e);
}

u64 Mmu::read_slow(u64 lin, unsigned size, u8 canonical_vector) {
    check_canonical(lin, canonical_vector);
    const unsigned first = unsigned(std::min<u64>(size, kPageSize - (lin & kPageMask)));
    // Translate every page before reading, so faults are raised in address order.
    const u64 pa0 = translate(lin, Access::kRead);
    u64 pa1 = 0;
    if (first < size) {
        check_canonical(lin + first, canonical_vector);
        pa1 = translate(lin + first, Access::kRead);
    }
    u64 v = bus_.read(pa0, first);
    if (first < size) v |= bus_.read(pa1, size - first) << (first * 8);
    else fill(lin, pa0, false);
    if (observe_) emit(lin, size, false, v);
    return v;
}

void Mmu::write_slow(u64 lin, unsigned size, u64 value, u8 canonical_vector) {
    check_canonical(lin, canonical_vector);
    const unsigned first = unsigned(std::min<u64>(size, kPageSize - (lin & kPageMask)));
    // Translate every page before writing any byte, so a fault leaves memory unchanged.
    const u64 pa0 = translate(lin, Access::kWrite);
    u64 pa1 = 0;
    if (first < size) {
        check_canonical(lin + first, canonical_vector);
        pa1 = translate(lin + first, Access::kWrite);
    }
    bus_.write(pa0, first, value);
    if (first < size) bus_.write(pa1, size - first, value >> (first * 8));
    const u64 pfns[2] = {pa0 / kPageSize, pa1 / kPageSize};
    for (unsigned k = 0; k < (first < size ? 2u : 1u); ++k) {
        if (is_code_page(pfns[k])) {
            code_pages_[pfns[k]] = 0;
            if (on_code_write) on_code_write(pfns[k]);
        }
    }
    if (first == size) fill(lin, pa0, true);
    if (observe_) emit(lin, size, true, value);
}

unsigned Mmu::fetch(u64 lin, u8* buf, unsigned max, u64 pfns[2]) {
    unsigned n = 0;
    pfns[0] = pfns[1] = ~0ull;
    fetch_fault_.reset();
    while (n < max) {
        const u64 a = (lin + n) & (long_mode_ ? ~0ull : 0xFFFFFFFFull);
        u64 pa;
        try {
            check_canonical(a);
            pa = translate(a, Access::kFetch);
        } catch (const GuestFault& f) {
            fetch_fault_ = f;
            break;
        }
        const unsigned chunk = unsigned(std::min<u64>(max - n, kPageSize - (a & kPageMask)));
        pfns[n == 0 ? 0 : 1] = pa / kPageSize;
        for (unsigned k = 0; k < chunk; ++k) buf[n + k] = u8(bus_.read(pa + k, 1));
        n += chunk;
    }
    return n;
}

void Mmu::mark_code_page(u64 pfn) {
    if (pfn >= code_pages_.size() || code_pages_[pfn]) return;
    code_pages_[pfn] = 1;
    // Any linear page may map it: drop fast write permissions everywhere.
    for (auto& set : tlbs_) {
        for (TlbEntry& e : set) {
            if (e.write_tag != ~0ull) {
                e.write_tag = ~0ull;
                e.write_host = nullptr;
            }
        }
    }
}

}  // namespace pmusim
