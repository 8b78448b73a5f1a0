#include "sim/core_msrs.h"

#include <memory>

#include "sim/cpu_profile.h"
#include "sim/fault.h"

namespace pmusim {

namespace {
inline void require_canonical(u64 v) {
    if (!is_canonical(v)) raise_fault(vec::GP, 0);
}
}  // namespace

void register_core_msrs(Cpu& c, std::function<u64()> now) {
    MsrBus& b = c.msrs;
    // IA32_EFER (SDM Vol. 3, 2.2.1): LMA is read-only; LME cannot change while paging is on.
    b.add({0xC0000080, "IA32_EFER", 0, ~(efer::kSCE | efer::kLME | efer::kLMA | efer::kNXE), false,
           [&c] { return c.efer; },
           [&c](u64 v) {
               if (((v ^ c.efer) & efer::kLME) && (c.cr0 & cr0::kPG)) raise_fault(vec::GP, 0);
               if ((v & efer::kNXE) && !(c.profile->query(0x80000001, 0).edx & (1u << 20))) raise_fault(vec::GP, 0);
               const u64 old = c.efer;
               c.efer = (v & ~efer::kLMA) | (c.efer & efer::kLMA);
               if ((old ^ c.efer) & efer::kNXE) {
                   c.mmu.flush_tlb();
                   c.pending |= kPendingPagingChange;
               }
           }});
    auto stored = [&b](u32 idx, const char* name, u64* field, u64 reserved, bool canon) {
        b.add({idx, name, 0, reserved, false, [field] { return *field; },
               [field, canon](u64 v) {
                   if (canon) require_canonical(v);
                   *field = v;
               }});
    };
    stored(0xC0000081, "IA32_STAR", &c.sys.star, 0, false);
    stored(0xC0000082, "IA32_LSTAR", &c.sys.lstar, 0, true);
    stored(0xC0000083, "IA32_CSTAR", &c.sys.cstar, 0, true);
    stored(0xC0000084, "IA32_FMASK", &c.sys.fmask, 0xFFFFFFFF00000000ull, false);
    stored(0xC0000102, "IA32_KERNEL_GS_BASE", &c.sys.kernel_gs_base, 0, true);
    stored(0x174, "IA32_SYSENTER_CS", &c.sys.sysenter_cs, 0xFFFFFFFFFFFF0000ull, false);
    stored(0x175, "IA32_SYSENTER_ESP", &c.sys.sysenter_esp, 0, true);
    stored(0x176, "IA32_SYSENTER_EIP", &c.sys.sysenter_eip, 0, true);
    // IA32_PAT: each entry must be a valid memory type (0, 1, 4, 5, 6, 7).
    b.add({0x277, "IA32_PAT", 0, 0xF8F8F8F8F8F8F8F8ull, false, [&c] { return c.sys.pat; },
           [&c](u64 v) {
               for (int k = 0; k < 8; ++k) {
                   const u64 t = (v >> (8 * k)) & 7;
                   if (t == 2 || t == 3) raise_fault(vec::GP, 0);
               }
               c.sys.pat = v;
           }});
    for (u8 s : {FS, GS}) {
        b.add({s == FS ? 0xC0000100u : 0xC0000101u, s == FS ? "IA32_FS_BASE" : "IA32_GS_BASE", 0, 0, false,
               [&c, s] { return c.seg[s].base; },
               [&c, s](u64 v) {
                   require_canonical(v);
                   c.seg[s].base = v;
                   c.update_mode();
               }});
    }
    auto offset = std::make_shared<u64>(0);
    b.add({0x10, "IA32_TIME_STAMP_COUNTER", 0, 0, false, [now, offset] { return now() + *offset; },
           [now, offset](u64 v) { *offset = v - now(); }});
    b.add({0xC0000103, "IA32_TSC_AUX", 0, 0xFFFFFFFF00000000ull, false, {}, {}});
}

}  // namespace pmusim
