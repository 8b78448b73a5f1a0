// CPU profiles: everything model-specific the core needs (CPUID answers for now).
#pragma once
#include <map>
#include <string>

#include "sim/types.h"

namespace pmusim {

struct CpuidLeaf {
    u32 eax = 0, ebx = 0, ecx = 0, edx = 0;
};

/// What a processor model answers and supports. Later work loads these from JSON
/// profile files; the built-in generic profile below is the default.
struct CpuProfile {
    std::string name;
    /// CPUID answers keyed by (leaf, subleaf); subleaf is 0 for leaves without subleaves.
    std::map<std::pair<u32, u32>, CpuidLeaf> cpuid;
    /// Leaves whose answer depends on ECX (SDM Vol. 2, CPUID, Table 3-8).
    std::map<u32, bool> has_subleaves;
    u8 physical_address_bits = 36;  ///< MAXPHYADDR (CPUID.80000008H:EAX[7:0])

    /// CPUID semantics (SDM Vol. 2, CPUID): a leaf above the maximum basic (or
    /// extended) leaf returns the data of the highest basic leaf.
    CpuidLeaf query(u32 leaf, u32 subleaf) const;
};

/// A generic Intel 64 processor: family 6, SSE2-era integer features, long mode,
/// SYSCALL, NX, RDTSCP, no x2APIC. Source of every bit: comments in cpu_profile.cpp.
const CpuProfile& generic_intel_profile();

}  // namespace pmusim
