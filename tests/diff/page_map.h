// Paging for the differential test's paged 32-bit mode: random paging structures
// that map the linear pages of the guest layout (diff_common.h) to other physical
// pages, under 32-bit paging (4 KiB pages; with CR4.PSE also one 4 MiB page,
// PSE-36 above 4 GiB) or PAE paging (4 KiB or 2 MiB pages, above 4 GiB too);
// SDM Vol. 3, 4.3 and 4.4. Every access of a block must succeed, so all mapped
// pages are present and writable at CPL 0: R/W = 0 only with CR0.WP = 0 (4.6.1).
// U/S, the initial accessed and dirty flags, and the bits that do not affect
// translation (PWT PCD PAT G and the ignored bits) are random.
#pragma once
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "tests/diff/diff_common.h"

namespace diff {

enum class PagingKind : u8 { kNone, k32, kPae };

constexpr u64 kPage = 0x1000;
constexpr unsigned kLinearPages = 8;  ///< linear pages 0-7 hold the layout; 0 and 3 are not present
constexpr u64 kStubPage = 0x7000;     ///< Unicorn's TLB-flush stub (UcDefect::kCrWriteNoFlush)
constexpr u64 kTablePool = 0x10000, kTablePoolEnd = 0x20000;  ///< paging-structure pages
constexpr u64 kFrameSpan = 0x40000;   ///< 4 KiB pages come from [0, span) or [4 GiB, 4 GiB + span)
constexpr u64 kHigh = 1ull << 32;
constexpr u64 kLargeSpan = 32ull << 20;  ///< large pages lie in [0, span) or [4 GiB, 4 GiB + span)
constexpr u64 kPagedRamBytes = kHigh + kLargeSpan;  ///< pmusim's RAM in the paged mode (sparse)

inline bool layout_page(unsigned p) {
    const u64 a = p * kPage;
    return (a >= kCodeBase && a < kCodeEnd) || (a >= kMemBase && a < kMemEnd) || a == kStubPage;
}

struct PageMap {
    PagingKind kind = PagingKind::kNone;
    u64 cr0 = 0, cr3 = 0, cr4 = 0;
    u64 large = 0;                 ///< with a 4 MiB / 2 MiB page: the physical address of linear 0
    u64 frame[kLinearPages] = {};  ///< with 4 KiB pages: each layout page's physical page
    std::vector<u64> table_pages;  ///< physical pages holding the paging structures
    std::vector<u8> tables;        ///< their initial contents, 4 KiB per page

    explicit operator bool() const { return kind != PagingKind::kNone; }
    u64 phys(u64 lin) const { return large ? large + lin : frame[lin / kPage] + lin % kPage; }
    /// Class of the set-up, for the summary and listings ("PAE 2M >4G").
    std::string variant() const {
        std::string s = kind == PagingKind::kPae ? "PAE" : (cr4 & 0x10) ? "32-bit PSE" : "32-bit";
        s += large ? (kind == PagingKind::kPae ? " 2M" : " 4M") : " 4K";
        bool high = large >= kHigh;
        for (u64 f : frame) high = high || f >= kHigh;
        return s + (high ? " >4G" : "");
    }
};

/// Random paging structures of `kind` (k32 or kPae) for one block.
inline PageMap make_page_map(Rng& rng, PagingKind kind) {
    PageMap m;
    m.kind = kind;
    const bool pae = kind == PagingKind::kPae, pse = !pae && rng.chance(60), wp = rng.chance(50);
    const unsigned es = pae ? 8 : 4;  // entry size
    m.cr0 = 0x80000011 | (wp ? 0x10000 : 0);  // PG, ET, PE, maybe WP
    m.cr4 = pae ? 0x20 : pse ? 0x10 : 0;      // PAE or PSE

    std::vector<u64> used;  // physical pages taken
    auto take = [&](u64 lo, u64 n) {
        for (;;) {
            const u64 p = lo + rng.below(n) * kPage;
            if (std::find(used.begin(), used.end(), p) == used.end()) return used.push_back(p), p;
        }
    };
    // A paging-structure page: not-present entries (P = 0) whose other bits are random,
    // as they are ignored (SDM Vol. 3, Tables 4-5, 4-8, 4-10).
    auto new_table = [&] {
        m.table_pages.push_back(take(kTablePool, (kTablePoolEnd - kTablePool) / kPage));
        for (unsigned i = 0; i < kPage; i += es) {
            const u64 e = rng.next() & ~u64(1);
            m.tables.insert(m.tables.end(), reinterpret_cast<const u8*>(&e), reinterpret_cast<const u8*>(&e) + es);
        }
        return m.table_pages.size() - 1;
    };
    auto put = [&](size_t table, u64 offset, u64 e) { std::memcpy(&m.tables[table * kPage + offset], &e, es); };
    // P, R/W (clear only without CR0.WP), U/S, PWT, PCD, A, ignored bits 11:9, and for
    // a page (leaf) D and G (ignored: CR4.PGE = 0), else ignored bits 6 and 8.
    auto flags = [&](bool leaf) {
        u64 f = 1 | (wp || rng.chance(70) ? 2 : 0) | (rng.next() & 0xE1C) | (rng.chance(30) ? 0x20 : 0);
        return f | (leaf ? (rng.chance(30) ? 0x40 : 0) | (rng.next() & 0x100) : rng.next() & 0x140);
    };

    size_t dir;
    if (pae) {
        // PDPTE registers (4.4.1): a 32-byte-aligned table; CR3 bits 4:0 are ignored.
        const size_t pdpt = new_table();
        const u64 at = rng.below(kPage / 32) * 32;
        dir = new_table();
        put(pdpt, at, m.table_pages[dir] | 1 | (rng.next() & 0xE18));  // P, PWT, PCD, ignored 11:9
        m.cr3 = m.table_pages[pdpt] + at + (rng.next() & 0x1F);
    } else {
        dir = new_table();
        m.cr3 = m.table_pages[dir] | (rng.next() & 0x18);  // PWT, PCD
    }
    const bool high = rng.chance(35);
    if ((pae || pse) && rng.chance(35)) {
        // One large page maps the layout (Tables 4-4, 4-9): PAT (bit 12) random; with
        // 32-bit paging PSE-36 puts physical bits 39:32 in bits 20:13.
        const u64 size = pae ? 2ull << 20 : 4ull << 20;
        m.large = (high ? kHigh : 0) + size * (high ? rng.below(kLargeSpan / size) : 1 + rng.below(kLargeSpan / size - 1));
        const u64 base = pae ? m.large : (m.large & 0xFFC00000) | ((m.large >> 32) << 13);
        put(dir, 0, base | flags(true) | 0x80 | (rng.next() & 0x1000));
        return m;
    }
    const size_t pt = new_table();
    // PS (bit 7) must be 0 with CR4.PSE = 1 and PAE, and is ignored otherwise (Tables 4-5, 4-10).
    put(dir, 0, m.table_pages[pt] | flags(false) | (!pae && !pse ? rng.next() & 0x80 : 0));
    for (unsigned p = 0; p < kLinearPages; ++p) {
        if (!layout_page(p)) continue;
        // 4 KiB pages anywhere but at their linear address; above 4 GiB only with PAE.
        const bool hi = pae && rng.chance(35);
        do m.frame[p] = take(hi ? kHigh : 0, kFrameSpan / kPage);
        while (m.frame[p] == p * kPage);
        put(pt, p * es, m.frame[p] | flags(true) | (rng.next() & 0x80));  // bit 7: PAT
    }
    return m;
}

}  // namespace diff
