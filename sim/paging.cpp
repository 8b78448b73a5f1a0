#include "sim/paging.h"

#include "sim/cpu.h"
#include "sim/cpu_profile.h"
#include "sim/fault.h"

namespace pmusim {

namespace {

constexpr u64 kPresent = 1, kRW = 2, kUS = 4, kAccessed = 0x20, kDirty = 0x40, kPS = 0x80;
constexpr u64 kXD = 1ull << 63;

[[noreturn]] void page_fault(u64 lin, u32 code) { throw GuestFault{vec::PF, true, code, lin}; }

u64 maxphy_mask(const Cpu& c) {
    const u8 bits = c.profile ? c.profile->physical_address_bits : 36;
    return ((1ull << bits) - 1) & ~0xFFFull;
}

struct Walker {
    const Cpu& c;
    MemoryBus& bus;
    u64 lin;
    Access acc;
    bool user;
    bool nxe = (c.efer & efer::kNXE) != 0;
    // Rights accumulated over the levels (SDM Vol. 3, 4.6).
    bool all_rw = true, all_us = true, any_xd = false;

    u32 code(u32 extra) const {
        u32 e = extra;
        if (acc == Access::kWrite) e |= pf::kW;
        if (user) e |= pf::kU;
        // I/D is reported only with PAE/4-level paging and NXE, or SMEP (SDM Vol. 3, 4.7).
        if (acc == Access::kFetch && (((c.cr4 & cr4::kPAE) && nxe) || (c.cr4 & cr4::kSMEP))) e |= pf::kI;
        return e;
    }

    /// Reads a paging-structure entry, checks presence and reserved bits, sets A.
    u64 entry(u64 pa, unsigned size, u64 rsvd) {
        u64 e = bus.read(pa, size);
        if (!(e & kPresent)) page_fault(lin, code(0));
        if (size == 8 && ((e & rsvd) || (!nxe && (e & kXD)))) page_fault(lin, code(pf::kP | pf::kRsvd));
        if (!(e & kAccessed)) {
            e |= kAccessed;
            bus.write(pa, size, e);
        }
        all_rw = all_rw && (e & kRW);
        all_us = all_us && (e & kUS);
        any_xd = any_xd || (nxe && (e & kXD));
        return e;
    }

    /// Final rights check, dirty flag, result.
    Translation finish(u64 leaf_pa, unsigned size, u64 e, u64 page_pa) {
        const bool wp = c.cr0 & cr0::kWP;
        bool ok = true;
        if (user && !all_us) ok = false;
        if (acc == Access::kWrite && !all_rw && (user || wp)) ok = false;
        if (acc == Access::kFetch && any_xd) ok = false;
        if (acc == Access::kFetch && !user && all_us && (c.cr4 & cr4::kSMEP)) ok = false;
        if (!ok) page_fault(lin, code(pf::kP));
        if (acc == Access::kWrite && !(e & kDirty)) bus.write(leaf_pa, size, e | kDirty);
        Translation t;
        t.page_pa = page_pa;
        const bool may_write = user ? all_rw : (all_rw || !wp);
        t.writable = may_write && (acc == Access::kWrite || (e & kDirty));
        return t;
    }
};

}  // namespace

Translation walk(const Cpu& c, MemoryBus& bus, u64 lin, Access acc, bool user) {
    Walker w{c, bus, lin, acc, user};
    const u64 phys = maxphy_mask(c);
    if (c.cr4 & cr4::kPAE) {
        // Reserved address bits: 51:MAXPHYADDR with 4-level paging (62:52 are ignored),
        // 62:MAXPHYADDR with PAE paging (SDM Vol. 3, 4.4.2 Tables 4-9..4-11; 4.5 Table 4-14+).
        const u64 top = c.long_mode() ? 0x000FFFFFFFFFF000ull : 0x7FFFFFFFFFFFF000ull;
        const u64 rsvd = ~phys & top;
        u64 pd_base;
        if (c.long_mode()) {
            // 4-level paging (SDM Vol. 3, 4.5).
            const u64 pml4e = w.entry((c.cr3 & phys) + ((lin >> 39) & 511) * 8, 8, rsvd | kPS);
            const u64 pdpte = w.entry((pml4e & phys) + ((lin >> 30) & 511) * 8, 8, rsvd);
            if (pdpte & kPS) {  // 1 GiB page
                if (pdpte & 0x3FFFE000ull) page_fault(lin, w.code(pf::kP | pf::kRsvd));
                const u64 base = pdpte & phys & ~0x3FFFFFFFull;
                return w.finish((pml4e & phys) + ((lin >> 30) & 511) * 8, 8, pdpte,
                                base + (lin & 0x3FFFF000ull));
            }
            pd_base = pdpte & phys;
        } else {
            // PAE paging (SDM Vol. 3, 4.4): the PDPTE registers loaded at MOV CR3.
            const u64 pdpte = c.pdpte[(lin >> 30) & 3];
            if (!(pdpte & kPresent)) page_fault(lin, w.code(0));
            pd_base = pdpte & phys;
        }
        const u64 pde_pa = pd_base + ((lin >> 21) & 511) * 8;
        const u64 pde = w.entry(pde_pa, 8, rsvd);
        if (pde & kPS) {  // 2 MiB page
            if (pde & 0x1FE000ull) page_fault(lin, w.code(pf::kP | pf::kRsvd));
            return w.finish(pde_pa, 8, pde, (pde & phys & ~0x1FFFFFull) + (lin & 0x1FF000ull));
        }
        const u64 pte_pa = (pde & phys) + ((lin >> 12) & 511) * 8;
        const u64 pte = w.entry(pte_pa, 8, rsvd);
        return w.finish(pte_pa, 8, pte, pte & phys);
    }
    // 32-bit paging (SDM Vol. 3, 4.3).
    const u64 pde_pa = (c.cr3 & 0xFFFFF000ull) + ((lin >> 22) & 1023) * 4;
    const u64 pde = w.entry(pde_pa, 4, 0);
    if ((pde & kPS) && (c.cr4 & cr4::kPSE)) {
        // 4 MiB page: PSE-36 bits 20:13 give PA 39:32; bits 21:(MAXPHYADDR-19) are
        // reserved (SDM Vol. 3, 4.3, Table 4-4).
        const u64 base = (pde & 0xFFC00000ull) | ((pde & 0x1FE000ull) << 19);
        if ((pde & (1ull << 21)) || (base & ~phys & ~0xFFFull)) page_fault(lin, w.code(pf::kP | pf::kRsvd));
        return w.finish(pde_pa, 4, pde, base + (lin & 0x3FF000ull));
    }
    const u64 pte_pa = (pde & 0xFFFFF000ull) + ((lin >> 12) & 1023) * 4;
    const u64 pte = w.entry(pte_pa, 4, 0);
    return w.finish(pte_pa, 4, pte, pte & 0xFFFFF000ull);
}

std::vector<u64> identity_map_4gib(u64 base, bool four_level) {
    std::vector<u64> t(6 * 512, 0);
    t[0] = (base + 0x1000) | 0x27;
    for (u64 k = 0; k < 4; ++k) t[512 + k] = (base + 0x2000 + k * 0x1000) | (four_level ? 0x27 : 0x1);
    for (u64 k = 0; k < 4 * 512; ++k) t[1024 + k] = (k << 21) | 0xE7;
    return t;
}

void load_pdptes(Cpu& c, MemoryBus& bus) {
    const u64 phys = maxphy_mask(c);
    // Reserved in PAE PDPTEs: bits 2:1, 8:5 and 63:MAXPHYADDR (SDM Vol. 3, Table 4-8).
    const u64 rsvd = 0x1E6ull | (~phys & 0xFFFFFFFFFFFFF000ull);
    u64 v[4];
    for (unsigned k = 0; k < 4; ++k) {
        v[k] = bus.read((c.cr3 & 0xFFFFFFE0ull) + k * 8, 8);
        if ((v[k] & 1) && (v[k] & rsvd)) raise_fault(vec::GP, 0);
    }
    for (unsigned k = 0; k < 4; ++k) c.pdpte[k] = v[k];
}

}  // namespace pmusim
