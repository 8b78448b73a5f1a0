#include "sim/mmu.h"

#include "sim/fault.h"

namespace pmusim {

Mmu::Mmu(MemoryBus& bus, EventBus& events)
    : bus_(bus), events_(events), code_pages_(bus.ram().page_count(), 0) {}

void Mmu::flush_tlb() {
    for (TlbEntry& e : tlb_) e = TlbEntry{};
}

void Mmu::refresh_observation() {
    observe_ = events_.wants(EventKind::kMemAccess);
    flush_tlb();
}

void Mmu::check_canonical(u64 lin) const {
    // SDM Vol. 1, 3.3.7.1: bits 63:47 must be all equal in 64-bit mode.
    if (long_mode_ && u64(i64(lin << 16) >> 16) != lin) raise_fault(vec::GP, 0);
}

u64 Mmu::translate(u64 lin) { return lin; }

void Mmu::fill(u64 lin, bool for_write) {
    if (observe_) return;
    const u64 pfn = translate(lin) / kPageSize;
    if (!bus_.page_is_ram(pfn)) return;
    TlbEntry& e = tlb_[(lin >> 12) & (kTlbEntries - 1)];
    if (e.read_tag != (lin >> 12)) e = TlbEntry{};
    e.read_tag = lin >> 12;
    if (for_write && !is_code_page(pfn)) {
        e.write_tag = lin >> 12;
        e.write_host = bus_.ram().page_for_write(pfn);
        e.read_host = e.write_host;
    } else if (e.write_tag != (lin >> 12)) {
        e.read_host = bus_.ram().page_for_read(pfn);
    }
}

u64 Mmu::read_slow(u64 lin, unsigned size) {
    check_canonical(lin);
    const unsigned first = unsigned(std::min<u64>(size, kPageSize - (lin & kPageMask)));
    u64 pa0 = translate(lin);
    u64 v = bus_.read(pa0, first);
    if (first < size) {
        check_canonical(lin + first);
        v |= bus_.read(translate(lin + first), size - first) << (first * 8);
    } else {
        fill(lin, false);
    }
    if (observe_) {
        Event e;
        e.kind = EventKind::kMemAccess;
        e.addr = lin;
        e.size = u8(size);
        e.value = v;
        events_.emit(e);
    }
    return v;
}

void Mmu::write_slow(u64 lin, unsigned size, u64 value) {
    check_canonical(lin);
    const unsigned first = unsigned(std::min<u64>(size, kPageSize - (lin & kPageMask)));
    // Translate every page before writing any byte, so a fault leaves memory unchanged.
    const u64 pa0 = translate(lin);
    u64 pa1 = 0;
    if (first < size) {
        check_canonical(lin + first);
        pa1 = translate(lin + first);
    }
    const u64 pfn0 = pa0 / kPageSize, pfn1 = pa1 / kPageSize;
    bus_.write(pa0, first, value);
    if (first < size) bus_.write(pa1, size - first, value >> (first * 8));
    for (u64 pfn : {pfn0, pfn1}) {
        if (is_code_page(pfn)) {
            code_pages_[pfn] = 0;
            if (on_code_write) on_code_write(pfn);
        }
        if (first == size) break;
    }
    if (first == size) fill(lin, true);
    if (observe_) {
        Event e;
        e.kind = EventKind::kMemAccess;
        e.addr = lin;
        e.size = u8(size);
        e.write = true;
        e.value = value;
        events_.emit(e);
    }
}

unsigned Mmu::fetch(u64 lin, u8* buf, unsigned max, u64 pfns[2]) {
    unsigned n = 0;
    pfns[0] = pfns[1] = ~0ull;
    while (n < max) {
        const u64 a = lin + n;
        if (long_mode_ && u64(i64(a << 16) >> 16) != a) break;
        const u64 pa = translate(a);
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
    // Any linear page may map it once paging exists: drop write permissions everywhere.
    for (TlbEntry& e : tlb_) {
        if (e.write_tag != ~0ull) {
            e.write_tag = ~0ull;
            e.write_host = nullptr;
        }
    }
}

}  // namespace pmusim
