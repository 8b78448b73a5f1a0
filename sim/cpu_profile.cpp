#include "sim/cpu_profile.h"

namespace pmusim {

CpuidLeaf CpuProfile::query(u32 leaf, u32 subleaf) const {
    const u32 max_basic = cpuid.count({0, 0}) ? cpuid.at({0, 0}).eax : 0;
    const u32 max_ext = cpuid.count({0x80000000, 0}) ? cpuid.at({0x80000000, 0}).eax : 0;
    const bool ext = leaf >= 0x80000000;
    if ((!ext && leaf > max_basic) || (ext && leaf > max_ext)) leaf = max_basic, subleaf = 0;
    auto sub = has_subleaves.find(leaf);
    if (sub == has_subleaves.end() || !sub->second) subleaf = 0;
    auto it = cpuid.find({leaf, subleaf});
    return it == cpuid.end() ? CpuidLeaf{} : it->second;
}

namespace {

u32 chars(const char* s) { return u32(u8(s[0])) | u32(u8(s[1])) << 8 | u32(u8(s[2])) << 16 | u32(u8(s[3])) << 24; }

CpuProfile make_generic() {
    CpuProfile p;
    p.name = "generic-intel";
    // Leaf 0: max basic leaf 0Bh, "GenuineIntel" in EBX EDX ECX.
    p.cpuid[{0, 0}] = {0x0B, chars("Genu"), chars("ntel"), chars("ineI")};
    // Leaf 1 (SDM Vol. 2, CPUID, Tables 3-10/3-11): family 6 model 0x25 stepping 5
    // (a Westmere signature), CLFLUSH line 8*8 bytes.
    auto bits = [](std::initializer_list<int> l) {
        u32 v = 0;
        for (int b : l) v |= 1u << b;
        return v;
    };
    // ECX: SSE3 DTES64 SSSE3 CX16 PDCM SSE4.1 SSE4.2 POPCNT.
    const u32 ecx1 = bits({0, 2, 9, 13, 15, 19, 20, 23});
    // EDX: FPU VME DE PSE TSC MSR PAE CX8 APIC SEP PGE CMOV PSE-36 CLFSH DS MMX FXSR SSE SSE2.
    const u32 edx1 = bits({0, 1, 2, 3, 4, 5, 6, 8, 9, 11, 13, 15, 17, 19, 21, 23, 24, 25, 26});
    p.cpuid[{1, 0}] = {0x00020655, 0x00000800, ecx1, edx1};
    p.cpuid[{0x80000000, 0}] = {0x80000008, 0, 0, 0};
    // 80000001H: ECX LAHF/SAHF in 64-bit mode (0); EDX SYSCALL(11) NX(20) RDTSCP(27) LM(29).
    p.cpuid[{0x80000001, 0}] = {0, 0, 1u, (1u << 11) | (1u << 20) | (1u << 27) | (1u << 29)};
    p.cpuid[{0x80000002, 0}] = {chars("pmus"), chars("im g"), chars("ener"), chars("ic I")};
    p.cpuid[{0x80000003, 0}] = {chars("ntel"), chars(" CPU"), 0, 0};
    p.cpuid[{0x80000004, 0}] = {0, 0, 0, 0};
    // 80000008H: 36 physical, 48 linear address bits.
    p.cpuid[{0x80000008, 0}] = {0x3024, 0, 0, 0};
    p.physical_address_bits = 36;
    return p;
}

}  // namespace

const CpuProfile& generic_intel_profile() {
    static const CpuProfile p = make_generic();
    return p;
}

}  // namespace pmusim
