// MSRs whose state lives in the core (registered by the Machine on the MSR bus).
#pragma once
#include <functional>

#include "sim/cpu.h"

namespace pmusim {

/// Registers IA32_EFER, IA32_STAR/LSTAR/CSTAR/FMASK, IA32_FS_BASE/GS_BASE/
/// KERNEL_GS_BASE, IA32_SYSENTER_CS/ESP/EIP, IA32_PAT, IA32_TIME_STAMP_COUNTER
/// and IA32_TSC_AUX (SDM Vol. 4, Table 2-2) on `c.msrs`.
///
/// The time-stamp counter here is the core's minimal one: `now()` (time in
/// instructions, plus halted time) plus the offset that a WRMSR sets. The TSC model
/// replaces IA32_TIME_STAMP_COUNTER and IA32_TSC_AUX when it is attached.
void register_core_msrs(Cpu& c, std::function<u64()> now);

}  // namespace pmusim
