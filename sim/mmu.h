// Linear-address memory access with a software TLB.
#pragma once
#include <cstring>
#include <functional>
#include <optional>
#include <vector>

#include "sim/bus.h"
#include "sim/events.h"
#include "sim/fault.h"
#include "sim/paging.h"

namespace pmusim {

struct Cpu;

/// A data address as the segmentation unit produced it: the linear address plus
/// the segment and offset, so the access can be checked against the segment's
/// limit and type with its real size and kind (SDM Vol. 3, 5.3 and 5.4).
/// `check` is false for flat segments and in 64-bit mode, where no check applies.
struct SegAddr {
    u64 lin;
    u64 off;
    u8 seg;
    bool check;
    SegAddr operator+(u64 n) const { return SegAddr{lin + n, off + n, seg, check}; }
};

/// Translates linear addresses and performs guest data accesses.
///
/// The fast path is an inline direct-mapped TLB lookup that yields a host
/// pointer for pages of plain RAM. There are two TLB sets, one for user-mode
/// (CPL 3) and one for supervisor accesses, so a privilege change only switches
/// sets. Everything else (first touch, page-crossing accesses, MMIO, non-canonical
/// addresses, pages holding decoded code, and all accesses while kMemAccess events
/// are observed) takes the out-of-line slow path, which walks the page tables when
/// CR0.PG = 1 (sim/paging.h).
///
/// Pages holding decoded instructions are never writable through the TLB, so the
/// slow path sees every write to them and reports it through `on_code_write`
/// (the decode cache invalidates those blocks: self-modifying code is seen by
/// the very next instruction, as on current Intel processors, SDM Vol. 3, 11.6).
class Mmu {
public:
    Mmu(MemoryBus& bus, EventBus& events);
    /// Connects the MMU to the control registers it translates with.
    void attach(const Cpu* cpu) { cpu_ = cpu; }

    /// Reads a T (1, 2, 4 or 8 bytes) at linear address `lin`. May throw GuestFault.
    template <class T>
    T read(u64 lin) { return read_impl<T>(lin, vec::GP); }
    /// Writes a T (1, 2, 4 or 8 bytes) at linear address `lin`. May throw GuestFault.
    template <class T>
    void write(u64 lin, T v) { write_impl<T>(lin, v, vec::GP); }

    /// Segment-relative accesses: the segment limit and type are checked first when
    /// the segment needs it (#GP(0), or #SS(0) for SS), then as read/write above.
    /// A non-canonical SS-relative address raises #SS(0) (SDM Vol. 3, 6.15, interrupt 12).
    template <class T>
    T read(const SegAddr& a) {
        if (__builtin_expect(a.check, 0)) check_segment(a, sizeof(T), false);
        return read_impl<T>(a.lin, a.seg == SS ? vec::SS : vec::GP);
    }
    template <class T>
    void write(const SegAddr& a, T v) {
        if (__builtin_expect(a.check, 0)) check_segment(a, sizeof(T), true);
        write_impl<T>(a.lin, v, a.seg == SS ? vec::SS : vec::GP);
    }

    /// Implicit supervisor accesses (descriptor tables, IDT, TSS; SDM Vol. 3, 4.6):
    /// translated with supervisor rights whatever the CPL.
    template <class T>
    T read_system(u64 lin) {
        Privilege p(*this, false);
        return read<T>(lin);
    }
    template <class T>
    void write_system(u64 lin, T v) {
        Privilege p(*this, false);
        write<T>(lin, v);
    }
    /// Accesses with explicit user/supervisor rights (stack pushes at a new privilege level).
    template <class T>
    void write_as(bool user, u64 lin, T v) {
        Privilege p(*this, user);
        write<T>(lin, v);
    }
    template <class T>
    T read_as(bool user, u64 lin) {
        Privilege p(*this, user);
        return read<T>(lin);
    }

    /// Reads up to `max` instruction bytes at `lin` for the decoder; returns how
    /// many could be fetched. If fewer than `max`, `fetch_fault()` holds the fault
    /// the first unfetchable byte raises (#PF or #GP). `pfns` receives the physical
    /// page of the first and, if reached, the second page.
    unsigned fetch(u64 lin, u8* buf, unsigned max, u64 pfns[2]);
    const std::optional<GuestFault>& fetch_fault() const { return fetch_fault_; }

    /// Linear -> physical for an access of kind `acc` at the current privilege
    /// (throws #PF). Identity when paging is off.
    u64 translate(u64 lin, Access acc);

    /// IA-32e 64-bit mode on: addresses must be canonical (48-bit), else #GP(0) (SDM Vol. 1, 3.3.7.1).
    void set_long_mode(bool on) { long_mode_ = on; }
    /// Selects the TLB set for user-mode (CPL 3) or supervisor accesses.
    void set_user(bool user) {
        user_ = user;
        tlb_ = tlbs_[user ? 1 : 0];
    }

    /// Marks physical page `pfn` as holding decoded code (writes then go slow and notify).
    void mark_code_page(u64 pfn);
    /// Called with the physical page number when a code page is written.
    std::function<void(u64 pfn)> on_code_write;

    /// Drops every cached translation (MOV CR3, paging mode changes).
    void flush_tlb();
    /// Drops the translations of one linear page (INVLPG).
    void flush_page(u64 lin);
    /// Re-reads the event mask (kMemAccess observation disables the fast path).
    void refresh_observation();

private:
    static constexpr unsigned kTlbEntries = 1024;
    struct TlbEntry {
        u64 read_tag = ~0ull, write_tag = ~0ull;
        const u8* read_host = nullptr;
        u8* write_host = nullptr;
    };
    /// Temporarily switches the privilege used for translation.
    struct Privilege {
        Mmu& m;
        bool saved;
        Privilege(Mmu& mm, bool user) : m(mm), saved(mm.user_) { m.set_user(user); }
        ~Privilege() { m.set_user(saved); }
    };

    template <class T>
    T read_impl(u64 lin, u8 canonical_vector) {
        const TlbEntry& e = tlb_[(lin >> 12) & (kTlbEntries - 1)];
        if (__builtin_expect(e.read_tag == (lin >> 12) && (lin & kPageMask) <= kPageSize - sizeof(T), 1)) {
            T v;
            std::memcpy(&v, e.read_host + (lin & kPageMask), sizeof(T));
            return v;
        }
        return T(read_slow(lin, sizeof(T), canonical_vector));
    }
    template <class T>
    void write_impl(u64 lin, T v, u8 canonical_vector) {
        const TlbEntry& e = tlb_[(lin >> 12) & (kTlbEntries - 1)];
        if (__builtin_expect(e.write_tag == (lin >> 12) && (lin & kPageMask) <= kPageSize - sizeof(T), 1)) {
            std::memcpy(e.write_host + (lin & kPageMask), &v, sizeof(T));
            return;
        }
        write_slow(lin, sizeof(T), u64(v), canonical_vector);
    }
    /// `canonical_vector`: #GP, or #SS for stack accesses.
    u64 read_slow(u64 lin, unsigned size, u8 canonical_vector);
    void write_slow(u64 lin, unsigned size, u64 value, u8 canonical_vector);
    void check_canonical(u64 lin, u8 vector = vec::GP) const;
    void check_segment(const SegAddr& a, unsigned size, bool write) const;
    void fill(u64 lin, u64 pa, bool writable);
    bool is_code_page(u64 pfn) const { return pfn < code_pages_.size() && code_pages_[pfn]; }
    void emit(u64 lin, unsigned size, bool write, u64 value);

    MemoryBus& bus_;
    EventBus& events_;
    const Cpu* cpu_ = nullptr;
    bool long_mode_ = false;
    bool user_ = false;
    bool observe_ = false;
    std::vector<u8> code_pages_;
    std::optional<GuestFault> fetch_fault_;
    TlbEntry tlbs_[2][kTlbEntries];
    TlbEntry* tlb_ = tlbs_[0];
};

}  // namespace pmusim
