// Linear-address memory access with a software TLB.
#pragma once
#include <cstring>
#include <functional>
#include <vector>

#include "sim/bus.h"
#include "sim/events.h"

namespace pmusim {

/// Translates linear addresses and performs guest data accesses.
///
/// The fast path is an inline direct-mapped TLB lookup that yields a host
/// pointer for pages of plain RAM. Everything else (first touch, page-crossing
/// accesses, MMIO, non-canonical addresses, pages holding decoded code, and all
/// accesses while kMemAccess events are observed) takes the out-of-line slow path.
///
/// Pages holding decoded instructions are never writable through the TLB, so the
/// slow path sees every write to them and reports it through `on_code_write`
/// (the decode cache invalidates those blocks: self-modifying code is seen by
/// the very next instruction, as on current Intel processors, SDM Vol. 3, 11.6).
///
/// Paging is not modelled yet: linear == physical (truncated to the bus width).
class Mmu {
public:
    Mmu(MemoryBus& bus, EventBus& events);

    /// Reads a T (1, 2, 4 or 8 bytes) at linear address `lin`. May throw GuestFault.
    template <class T>
    T read(u64 lin) {
        const TlbEntry& e = tlb_[(lin >> 12) & (kTlbEntries - 1)];
        if (__builtin_expect(e.read_tag == (lin >> 12) && (lin & kPageMask) <= kPageSize - sizeof(T), 1)) {
            T v;
            std::memcpy(&v, e.read_host + (lin & kPageMask), sizeof(T));
            return v;
        }
        return T(read_slow(lin, sizeof(T)));
    }
    /// Writes a T (1, 2, 4 or 8 bytes) at linear address `lin`. May throw GuestFault.
    template <class T>
    void write(u64 lin, T v) {
        const TlbEntry& e = tlb_[(lin >> 12) & (kTlbEntries - 1)];
        if (__builtin_expect(e.write_tag == (lin >> 12) && (lin & kPageMask) <= kPageSize - sizeof(T), 1)) {
            std::memcpy(e.write_host + (lin & kPageMask), &v, sizeof(T));
            return;
        }
        write_slow(lin, sizeof(T), u64(v));
    }

    /// Reads up to `max` instruction bytes at `lin` for the decoder; returns how
    /// many could be read (fewer at a page that cannot be fetched). `pfns` receives
    /// the physical page of the first and, if reached, the second page.
    unsigned fetch(u64 lin, u8* buf, unsigned max, u64 pfns[2]);

    /// IA-32e mode on: addresses must be canonical (48-bit), else #GP(0) (SDM Vol. 1, 3.3.7.1).
    void set_long_mode(bool on) { long_mode_ = on; }

    /// Marks physical page `pfn` as holding decoded code (writes then go slow and notify).
    void mark_code_page(u64 pfn);
    /// Called with the physical page number when a code page is written.
    std::function<void(u64 pfn)> on_code_write;

    /// Drops every cached translation.
    void flush_tlb();
    /// Re-reads the event mask (kMemAccess observation disables the fast path).
    void refresh_observation();

private:
    static constexpr unsigned kTlbEntries = 1024;
    struct TlbEntry {
        u64 read_tag = ~0ull, write_tag = ~0ull;
        const u8* read_host = nullptr;
        u8* write_host = nullptr;
    };

    u64 read_slow(u64 lin, unsigned size);
    void write_slow(u64 lin, unsigned size, u64 value);
    /// Linear -> physical. The single place paging will hook in.
    u64 translate(u64 lin);
    void check_canonical(u64 lin) const;
    void fill(u64 lin, bool for_write);
    bool is_code_page(u64 pfn) const { return pfn < code_pages_.size() && code_pages_[pfn]; }

    MemoryBus& bus_;
    EventBus& events_;
    bool long_mode_ = false;
    bool observe_ = false;
    std::vector<u8> code_pages_;
    TlbEntry tlb_[kTlbEntries];
};

}  // namespace pmusim
