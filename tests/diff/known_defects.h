// Known defects the differential test steers around: kUnicornDefects lists Unicorn 2
// (2.0.1, QEMU 5.0 TCG) deviations from the Intel SDM. Each entry says what is
// avoided and why; the code names the entry (by its enum) at every place it steers
// around it. A mismatch not explained by this table fails the test.
#pragma once
#include <cstddef>

namespace diff {

enum class UcDefect {
    kPopcntUndefined,
    kCmpxchg8bFlags,
    kShxdImmRipRelative,
    kEnter16,
    kLockNegFlags,
    kCmpxchgZeroExtend,
    kLoopccFlags,
    kStaleTranslations,
    kIdentityPaging,
    kCrWriteNoFlush,
    kCount
};

template <class Id>
struct DefectInfo {
    Id id;
    const char* what;      ///< the affected instruction form
    const char* reason;    ///< what Unicorn does and what the SDM says
    const char* handling;  ///< how the test avoids it
};

// clang-format off
inline constexpr DefectInfo<UcDefect> kUnicornDefects[] = {
    {UcDefect::kPopcntUndefined, "POPCNT r, r/m (F3 0F B8)",
     "every Unicorn 2.0.1 x86 CPU model leaves CPUID.01H:ECX.POPCNT[23] clear, so POPCNT raises #UD "
     "(UC_ERR_INSN_INVALID); uc_ctl_set_cpu_model does not change it",
     "POPCNT is not generated"},
    {UcDefect::kCmpxchg8bFlags, "CMPXCHG8B / CMPXCHG16B m64/m128 (0F C7 /1)",
     "inside a translation block after a flag-writing instruction Unicorn computes EFLAGS from stale "
     "lazy-flag state (garbage such as 0xfdb9d33b, TF/IF/IOPL set); single-stepped it is right. "
     "SDM: ZF per the compare, CF PF AF SF OF unchanged",
     "a JMP +0 (EB 00) precedes every CMPXCHG8B/16B so it starts a new translation block"},
    {UcDefect::kShxdImmRipRelative, "SHLD/SHRD m, r, imm8 (0F A4/AC) with a RIP-relative operand",
     "Unicorn computes the RIP-relative address without counting the imm8 byte (one byte too low); "
     "SDM Vol. 2, 2.2.1.6: RIP-relative is relative to the end of the instruction",
     "the imm8 forms of SHLD/SHRD get no RIP-relative memory operand"},
    {UcDefect::kEnter16, "ENTER imm16, imm8 with operand size 16 (66 C8)",
     "Unicorn writes all of rBP (by stack-address size) with the frame pointer; SDM Vol. 2A ENTER: "
     "the operand size sets the size of the data moved from SP/ESP/RSP into BP/EBP/RBP, so only BP",
     "ENTER is generated with the default operand size only"},
    {UcDefect::kLockNegFlags, "LOCK NEG m (F0 F6/F7 /3)",
     "with LOCK Unicorn derives SF ZF PF from the wrong value (e.g. NEG of 0x300b gives CF AF instead of "
     "CF PF AF SF); the memory result is right. SDM Vol. 2B NEG: flags per the result",
     "NEG is generated without LOCK"},
    {UcDefect::kCmpxchgZeroExtend, "CMPXCHG r/m32, r32 (0F B1) in 64-bit code",
     "Unicorn writes EAX and a register destination every time, so it zero-extends RAX when the "
     "compare succeeds and the destination register when it fails; Intel processors write only what "
     "the SDM pseudo-code assigns (DEST on success, the accumulator on failure; QEMU fixed this after 5.0)",
     "bits 63:32 of RAX and of a register destination are cleared (MOV r32, r32) before such a CMPXCHG"},
    {UcDefect::kLoopccFlags, "LOOPE / LOOPNE rel8 (E1 / E0)",
     "inside a translation block after a flag-writing instruction, when rCX reaches 0 Unicorn leaves "
     "with stale lazy-flag state and EFLAGS become garbage (e.g. 0x1234567a); single-stepped it is "
     "right. SDM Vol. 2A LOOP/LOOPcc: flags unaffected",
     "a JMP +0 (EB 00) precedes every LOOPE/LOOPNE so it starts a new translation block"},
    {UcDefect::kStaleTranslations, "code rewritten with uc_mem_write between runs",
     "Unicorn keeps executing translation blocks cached for the old bytes at the same address",
     "UnicornCpu::load drops the code area's cached translations (uc_ctl_remove_cache)"},
    {UcDefect::kIdentityPaging, "every memory access with paging on (CR0.PG = 1)",
     "Unicorn 2.0.1 walks the paging structures (sets accessed and dirty flags, raises #PF) but then "
     "accesses the linear address as the physical one (qemu/target/i386/excp_helper.c: \"Unicorn: identity "
     "map guest virtual address\"; Unicorn 2.1 added UC_TLB_CPU). SDM Vol. 3, 4.1: paging translates "
     "linear addresses to physical addresses",
     "the paged mode gives both sides the same paging structures, and the code, data and stack bytes at the "
     "mapped physical pages to pmusim but at their linear addresses to Unicorn; memory is compared through "
     "each side's linear view, the paging structures byte for byte"},
    {UcDefect::kCrWriteNoFlush, "uc_reg_write of CR0, CR3 or CR4",
     "the value is stored without flushing the TLB, so translations (and the accessed/dirty state) cached "
     "under the previous paging structures stay in use; a guest MOV to CR3 flushes (SDM Vol. 3, 4.10.4.1)",
     "before each paged block UnicornCpu::load runs MOV CR3, EAX from a stub page, then writes the new "
     "paging structures and control registers"},
};
// clang-format on

static_assert(sizeof(kUnicornDefects) / sizeof(kUnicornDefects[0]) == size_t(UcDefect::kCount));



}  // namespace diff
