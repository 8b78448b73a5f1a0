// CPU profiles: everything model-specific (CPUID answers, PMU shape, LBR and Debug
// Store layout, clocks, timing parameters, quirks), loaded from JSON files in
// sim/profiles/ (format: docs/profiles.md).
#pragma once
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/types.h"

namespace pmusim {

struct CpuidLeaf {
    u32 eax = 0, ebx = 0, ecx = 0, edx = 0;
    bool operator==(const CpuidLeaf&) const = default;
};

/// Bad profile input. `what()` is the whole message: the file, the JSON path and
/// what was expected, e.g. "westmere.json: /pmu/gp_width: expected an integer 1..64, got 65".
struct ProfileError : std::runtime_error {
    ProfileError(const std::string& file, const std::string& path, const std::string& msg);
    std::string file;  ///< file name (or label) the error is about
    std::string path;  ///< JSON pointer of the offending value ("" for file-level errors)
};

/// The architectural events of CPUID leaf 0AH in EBX bit order (SDM Vol. 3B,
/// 20.2.1.2, Table 20-1 "UnHalted Core Cycles" ... "Topdown Slots").
enum class ArchEvent : u8 {
    kCoreCycles,
    kInstructions,
    kRefCycles,
    kLlcReferences,
    kLlcMisses,
    kBranches,
    kBranchMisses,
    kTopdownSlots,
};

/// What a model-specific event counts, in terms the core can compute exactly.
/// The PMU model maps (event, umask) to one of these through the profile.
enum class EventCount : u8 {
    kInstructions,
    kCoreCycles,
    kRefCycles,
    kLlcReferences,
    kLlcMisses,
    kBranches,
    kBranchMisses,
    kBranchesTaken,
    kBranchesNotTaken,
    kBranchesConditional,
    kNearCalls,
    kNearReturns,
    kFarBranches,
    kLoads,
    kStores,
    kHwInterrupts,
};
/// The profile-file spelling of `c` ("branches-taken", ...).
const char* event_count_name(EventCount c);

/// A model-specific performance event (SDM Vol. 3B ch. 19 event tables).
struct PmuEvent {
    std::string name;  ///< Intel's event name, e.g. "BR_INST_RETIRED.CONDITIONAL"
    u8 event = 0;      ///< IA32_PERFEVTSELx[7:0]
    u8 umask = 0;      ///< IA32_PERFEVTSELx[15:8]
    EventCount counts = EventCount::kInstructions;
};

/// Architectural performance monitoring (SDM Vol. 3B, 18.2). CPUID leaf 0AH is
/// generated from these fields. version 0: no architectural PMU (leaf 0AH reads 0).
struct PmuInfo {
    u8 version = 0;                ///< CPUID.0AH:EAX[7:0]
    u8 gp_counters = 0;            ///< IA32_PMCx per logical processor, CPUID.0AH:EAX[15:8]
    u8 gp_width = 0;               ///< bits of each IA32_PMCx, CPUID.0AH:EAX[23:16]
    u8 fixed_counters = 0;         ///< IA32_FIXED_CTRx, CPUID.0AH:EDX[4:0] (version >= 2)
    u8 fixed_width = 0;            ///< bits of each fixed counter, CPUID.0AH:EDX[12:5]
    u8 arch_events = 0;            ///< length of the EBX event vector, CPUID.0AH:EAX[31:24]
    u32 unavailable_events = 0;    ///< CPUID.0AH:EBX: bit n set = ArchEvent n not available
    std::vector<PmuEvent> events;  ///< model-specific events the core can count exactly
    bool event_available(ArchEvent e) const {
        return unsigned(e) < arch_events && !(unavailable_events >> unsigned(e) & 1);
    }
};

/// The LBR stack (SDM Vol. 3B, 17.4.8 and the per-microarchitecture LBR sections).
/// The record format is perf_capabilities[5:0] (CpuProfile::lbr_format()).
struct LbrInfo {
    u8 depth = 0;                  ///< entries (FROM/TO pairs)
    u32 from_base = 0;             ///< MSR_LASTBRANCH_0_FROM_IP
    u32 to_base = 0;               ///< MSR_LASTBRANCH_0_TO_IP
    std::optional<u32> info_base;  ///< MSR_LBR_INFO_0 (format 5 and later), else none
    u32 tos = 0x1C9;               ///< MSR_LASTBRANCH_TOS
    std::optional<u32> select;     ///< MSR_LBR_SELECT (0x1C8) where the processor has it
    u32 ler_from = 0x1DD;          ///< MSR_LER_FROM_LIP
    u32 ler_to = 0x1DE;            ///< MSR_LER_TO_LIP
    bool call_stack = false;       ///< MSR_LBR_SELECT.EN_CALLSTACK (bit 9) supported
};

/// Debug Store features (SDM Vol. 3B, 17.4.9 and the PEBS sections of ch. 18). IA32_MISC_ENABLE
/// bits 11 (BTS unavailable) and 12 (PEBS unavailable) follow from `bts` and `pebs`.
struct DsInfo {
    bool bts = false;          ///< branch trace store available
    bool pebs = false;         ///< precise event-based sampling available
    u32 pebs_gp_counters = 0;  ///< IA32_PEBS_ENABLE bits 0..n: PEBS-capable IA32_PMCx (mask)
    u32 pebs_fixed_counters =
        0;  ///< PEBS-capable fixed counters (mask; reset fields in the DS area)
    bool pebs_load_latency = false;  ///< MSR_PEBS_LD_LAT_THRESHOLD (0x3F6) and load-latency records
};

/// Cycles per instruction class for the timing model (approximate; docs/profiles.md).
struct Latencies {
    u32 alu = 1;                  ///< integer ALU, MOV, LEA, MOVZX/SX, SETcc, XCHG reg
    u32 cmov = 1;                 ///< CMOVcc
    u32 shift = 1;                ///< shifts and rotates
    u32 imul = 3;                 ///< IMUL/MUL
    u32 div32 = 26;               ///< DIV/IDIV up to 32-bit operands
    u32 div64 = 40;               ///< DIV/IDIV with 64-bit operands
    u32 store = 1;                ///< a store (the load side is timed by the cache model)
    u32 branch = 1;               ///< a branch not taken
    u32 branch_taken = 2;         ///< a taken near branch (JMP, taken Jcc)
    u32 call_ret = 2;             ///< CALL, RET
    u32 mispredict_penalty = 16;  ///< added when the branch predictor was wrong
    u32 string_iteration = 1;     ///< per element of a REP string instruction
    u32 serializing = 100;        ///< CPUID, WRMSR, MOV CR, LGDT... (serializing instructions)
    u32 interrupt = 200;          ///< delivering an exception or interrupt through the IDT
    u32 memory = 200;             ///< a load that misses every cache level
    u32 other = 1;                ///< anything not classified
};

/// Branch predictor of the timing model.
struct BranchPredictorInfo {
    enum class Kind : u8 { kBimodal, kGshare };
    Kind kind = Kind::kGshare;
    u32 entries = 4096;   ///< 2-bit counters (power of two)
    u8 history_bits = 0;  ///< global history length (gshare); 0 for bimodal
};

struct CacheLevel {
    u64 size = 0;     ///< bytes
    u32 ways = 0;     ///< associativity
    u32 line = 64;    ///< line size in bytes
    u32 latency = 0;  ///< load-to-use latency of a hit, in core cycles
    u64 sets() const { return size / (u64(ways) * line); }
};

/// Data cache hierarchy of one core (sizes from CPUID leaf 04H where the profile has it).
struct CacheInfo {
    CacheLevel l1d, l2;
    std::optional<CacheLevel> llc;  ///< none: the L2 is the last-level cache (Core 2)
};

/// Named deviations of a processor from the SDM rule, each documented in
/// docs/profiles.md with its source.
enum class Quirk : u8 {
    /// Seed 000 section 8 (Westmere Core i5): BTINT=1 with the BTS threshold one record
    /// above the absolute maximum gives repeated DS interrupts; two or more records
    /// above gives none.
    kBtsThresholdAboveMaxWestmere,
    /// Early Core 2 (06_0FH) report 0 fixed counters in CPUID.0AH:EDX although
    /// PMU version 2 has three; leaf 0AH EDX is then generated as 0.
    kV2FixedCountersNotEnumerated,
};
const char* quirk_name(Quirk q);

/// What a processor model answers and supports. Built from a profile file
/// (load_profile) or the built-in generic profile.
struct CpuProfile {
    std::string name;         ///< profile name = file stem ("westmere")
    std::string description;  ///< one line for listings
    std::string source;  ///< file the profile was loaded from ("<built-in>" for the embedded copy)
    /// CPUID answers keyed by (leaf, subleaf); subleaf is 0 for leaves without subleaves.
    std::map<std::pair<u32, u32>, CpuidLeaf> cpuid;
    /// Leaves whose answer depends on ECX (SDM Vol. 2, CPUID, Table 3-8).
    std::map<u32, bool> has_subleaves;
    u8 physical_address_bits = 36;  ///< MAXPHYADDR (CPUID.80000008H:EAX[7:0]; 36 without that leaf)

    PmuInfo pmu;
    /// IA32_PERF_CAPABILITIES (MSR 0x345; SDM Vol. 4, Table 2-2): LBR format [5:0],
    /// PEBS trap [6], PEBS arch regs [7], PEBS record format [11:8], freeze while SMM
    /// [12], full-width counter writes [13]. The MSR exists when CPUID.01H:ECX.PDCM = 1.
    u64 perf_capabilities = 0;
    LbrInfo lbr;
    DsInfo ds;
    u64 tsc_hz = 0;   ///< time-stamp counter frequency (invariant TSC), Hz
    u64 core_hz = 0;  ///< core clock for cycle counts, Hz
    u64 bus_hz = 0;   ///< clock of the local APIC timer (bus or core crystal clock), Hz
    Latencies latencies;
    BranchPredictorInfo branch_predictor;
    CacheInfo caches;
    std::vector<Quirk> quirks;
    /// The profile as JSON (after overrides), for apply_overrides and reports.
    std::string document;
    /// Overrides applied so far, as "JSON pointer = value" texts, in order.
    std::vector<std::string> overrides;

    /// CPUID semantics (SDM Vol. 2, CPUID): a leaf above the maximum basic (or
    /// extended) leaf returns the data of the highest basic leaf.
    CpuidLeaf query(u32 leaf, u32 subleaf) const;

    // Decoded fields.
    u8 lbr_format() const { return perf_capabilities & 0x3F; }
    bool pebs_trap() const { return perf_capabilities >> 6 & 1; }
    bool pebs_arch_regs() const { return perf_capabilities >> 7 & 1; }
    u8 pebs_format() const { return perf_capabilities >> 8 & 0xF; }
    bool freeze_while_smm() const { return perf_capabilities >> 12 & 1; }
    bool full_width_writes() const { return perf_capabilities >> 13 & 1; }
    bool has_quirk(Quirk q) const;
    /// Display family, model and stepping from CPUID.01H:EAX (SDM Vol. 2, CPUID, Figure 3-6).
    u32 family() const;
    u32 model() const;
    u32 stepping() const;
    /// Bytes of one PEBS record of this profile's format in the 64-bit (`ds64`) or the
    /// 32-bit DS layout: format 0 = 144 (64-bit) or 40 (32-bit), 1 = 176, 2 = 192, 3 = 200
    /// (SDM Vol. 3B, PEBS record layouts in ch. 18; seed 000). 0 for formats pmusim does not know.
    u32 pebs_record_bytes(bool ds64) const;
    /// IA32_MISC_ENABLE bits the profile fixes (SDM Vol. 4, Table 2-2): bit 7 performance
    /// monitoring available, bit 11 BTS unavailable, bit 12 PEBS unavailable.
    u64 misc_enable_bits() const;
};

/// The built-in generic Intel 64 profile: an embedded copy of
/// sim/profiles/generic-intel.json, so the library works without installed profiles.
const CpuProfile& generic_intel_profile();

/// Loads and validates a profile file. Throws ProfileError for a missing file,
/// malformed JSON (with line and column), unknown keys, wrong types or values, and
/// inconsistencies (each with its JSON path). The profile's "name" must equal the
/// file name without ".json".
CpuProfile load_profile(const std::string& path);
/// Parses a profile from text; `label` names it in messages (and is the name the
/// profile's "name" must match when `check_name` is set).
CpuProfile parse_profile(const std::string& text, const std::string& label,
                         bool check_name = false);

/// Directories searched for profiles, in order: the entries of $PMUSIM_PROFILE_PATH
/// (colon-separated), the source tree's sim/profiles (if it still exists), and the
/// installed share/pmusim/profiles.
std::vector<std::string> default_profile_dirs();

/// Finds `<name>.json` in `dirs` (first match wins) and loads it. A name containing
/// '/' or ending in ".json" is loaded as a path. "generic-intel" falls back to the
/// built-in copy when no directory has it. Throws ProfileError for an unknown name
/// (listing the directories searched and the profiles available).
CpuProfile load_profile_by_name(const std::string& name,
                                const std::vector<std::string>& dirs = default_profile_dirs());

struct ProfileListing {
    std::string name;         ///< file stem
    std::string path;         ///< file found first for that name
    std::string description;  ///< the profile's description, if it loads
    std::string error;        ///< the load error, if it does not
};
/// All profiles in `dirs` (first directory wins for a name), sorted by name.
std::vector<ProfileListing> list_profiles(
    const std::vector<std::string>& dirs = default_profile_dirs());

/// Applies a scenario's overrides to `p` and validates the result as a whole profile
/// (same rules and messages as loading). `overrides` is an object whose keys are
/// either JSON pointers into the profile ({"/pmu/gp_counters": 2}) or profile keys
/// whose object values are merged ({"pmu": {"gp_counters": 2}}). Each override
/// replaces one existing value (or adds a key where the profile format allows one,
/// e.g. a CPUID leaf). "/name" cannot be overridden. On error `p` is unchanged.
void apply_overrides(CpuProfile& p, const nlohmann::json& overrides);

}  // namespace pmusim
