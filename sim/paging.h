// Linear-address translation by the paging structures (SDM Vol. 3, ch. 4).
#pragma once
#include <vector>

#include "sim/bus.h"

namespace pmusim {

struct Cpu;

enum class Access : u8 { kRead, kWrite, kFetch };

/// #PF error-code bits (SDM Vol. 3, 4.7).
namespace pf {
inline constexpr u32 kP = 1, kW = 2, kU = 4, kRsvd = 8, kI = 16;
}

/// Result of a successful walk: the physical page and the rights the whole
/// walk grants, so the TLB can cache them.
struct Translation {
    u64 page_pa = 0;       ///< physical address of the 4 KiB page containing the address
    bool writable = false; ///< a write by this privilege would be allowed (and D is set)
};

/// Translates `lin` for an access by a user-mode (CPL 3, non-implicit) or
/// supervisor accessor under the current CR0/CR3/CR4/EFER and the PAE PDPTE
/// registers. Sets accessed flags, and the dirty flag for writes. Throws
/// GuestFault #PF with the SDM error code and fault_address = lin (the CR2 value).
/// Paging modes: 32-bit (4 KiB and, with CR4.PSE, 4 MiB pages), PAE (4 KiB, 2 MiB)
/// and 4-level (4 KiB, 2 MiB, 1 GiB).
Translation walk(const Cpu& c, MemoryBus& bus, u64 lin, Access acc, bool user);

/// Page tables identity-mapping the first 4 GiB with 2 MiB pages (present, writable,
/// user, accessed, dirty), to be placed at physical `base`: 6 pages of entries,
/// PML4 at base, PDPT at base + 4 KiB, four page directories after it. For
/// 4-level paging CR3 = base; for PAE paging CR3 = base + 4 KiB (its first four
/// entries are then PDPTEs with only P set, as SDM Vol. 3, Table 4-8 requires).
std::vector<u64> identity_map_4gib(u64 base, bool four_level);

/// Loads the four PAE PDPTEs from CR3 (SDM Vol. 3, 4.4.1): done on MOV CR3 and
/// when PAE paging is activated. Throws GuestFault #GP(0) if a present PDPTE has
/// reserved bits set.
void load_pdptes(Cpu& c, MemoryBus& bus);

}  // namespace pmusim
