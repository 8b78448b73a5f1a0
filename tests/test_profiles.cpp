// CPU profiles (sim/cpu_profile.h, sim/profiles/*.json, docs/profiles.md): loading,
// exact values of the shipped profiles, CPUID through a guest, overrides, bad input.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/cpu_profile.h"
#include "sim/machine.h"
#include "tests/support/asm_harness.h"

using namespace pmusim;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kDir = std::string(PMUSIM_SOURCE_DIR) + "/sim/profiles";
const char* const kShipped[] = {"core2", "generic-intel", "skylake", "westmere"};

CpuProfile shipped(const std::string& name) { return load_profile(kDir + "/" + name + ".json"); }

std::string read_text(const std::string& path) {
    std::ifstream f(path);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

json shipped_json(const std::string& name) {
    return json::parse(read_text(kDir + "/" + name + ".json"));
}

/// A private temporary directory, removed at the end of the test.
struct TempDir {
    fs::path path;
    TempDir() {
        path = fs::temp_directory_path() / ("pmusim_test_profiles_" + std::to_string(getpid()));
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~TempDir() { fs::remove_all(path); }
    std::string write(const std::string& file, const std::string& text) const {
        const fs::path p = path / file;
        std::ofstream(p) << text;
        return p.string();
    }
};

/// Writes `doc` as `<name>.json` and returns the load error message ("" if it loads).
std::string load_error(const json& doc, const std::string& name = "westmere") {
    TempDir d;
    const std::string p = d.write(name + ".json", doc.dump(2));
    try {
        load_profile(p);
    } catch (const ProfileError& e) {
        return e.what();
    }
    return "";
}

std::string override_error(CpuProfile& p, const json& ov) {
    try {
        apply_overrides(p, ov);
    } catch (const ProfileError& e) {
        return e.what();
    }
    return "";
}

u32 chars(const char* s) {
    return u32(u8(s[0])) | u32(u8(s[1])) << 8 | u32(u8(s[2])) << 16 | u32(u8(s[3])) << 24;
}

/// The CPUID table pmusim had built in before profile files existed (the former
/// make_generic() of sim/cpu_profile.cpp, copied verbatim).
std::map<std::pair<u32, u32>, CpuidLeaf> former_builtin_cpuid() {
    std::map<std::pair<u32, u32>, CpuidLeaf> t;
    t[{0, 0}] = {0x0B, chars("Genu"), chars("ntel"), chars("ineI")};
    auto bits = [](std::initializer_list<int> l) {
        u32 v = 0;
        for (int b : l) v |= 1u << b;
        return v;
    };
    const u32 ecx1 = bits({0, 2, 9, 13, 15, 19, 20, 23});
    const u32 edx1 = bits({0, 1, 2, 3, 4, 5, 6, 8, 9, 11, 13, 15, 17, 19, 21, 23, 24, 25, 26});
    t[{1, 0}] = {0x00020655, 0x00000800, ecx1, edx1};
    t[{0x80000000, 0}] = {0x80000008, 0, 0, 0};
    t[{0x80000001, 0}] = {0, 0, 1u, (1u << 11) | (1u << 20) | (1u << 27) | (1u << 29)};
    t[{0x80000002, 0}] = {chars("pmus"), chars("im g"), chars("ener"), chars("ic I")};
    t[{0x80000003, 0}] = {chars("ntel"), chars(" CPU"), 0, 0};
    t[{0x80000004, 0}] = {0, 0, 0, 0};
    t[{0x80000008, 0}] = {0x3024, 0, 0, 0};
    return t;
}

bool bit(u32 v, int b) { return v >> b & 1; }

/// Runs CPUID for each (leaf, subleaf) in a 64-bit guest on a machine with profile
/// `p`; returns what the guest stored.
std::vector<CpuidLeaf> guest_cpuid(const CpuProfile& p,
                                   const std::vector<std::pair<u32, u32>>& queries) {
    std::string src;
    for (size_t i = 0; i < queries.size(); ++i) {
        const u64 at = test::kDataBase + 16 * i;
        src += "mov eax, " + std::to_string(queries[i].first) + "\nmov ecx, " +
               std::to_string(queries[i].second) + "\ncpuid\nmov [" + std::to_string(at) +
               "], eax\nmov [" + std::to_string(at + 4) + "], ebx\nmov [" + std::to_string(at + 8) +
               "], ecx\nmov [" + std::to_string(at + 12) + "], edx\n";
    }
    src += "hlt\n";
    MachineConfig cfg;
    cfg.profile = &p;
    Machine m(cfg);
    const auto code = test::assemble(64, src);
    m.load(test::kCodeBase, code.data(), code.size());
    m.set_flat_mode(CodeBits::k64);
    m.cpu().rip = test::kCodeBase;
    m.cpu().gpr[RSP] = test::kStackTop;
    const RunResult r = m.run(RunLimits{100000});
    REQUIRE(r.reason == StopReason::kHalt);
    std::vector<CpuidLeaf> out(queries.size());
    for (size_t i = 0; i < queries.size(); ++i) m.peek(test::kDataBase + 16 * i, &out[i], 16);
    return out;
}

}  // namespace

// ---- the shipped profiles --------------------------------------------------------

TEST_CASE("every shipped profile loads and cites its sources", "[profiles]") {
    for (const char* name : kShipped) {
        INFO(name);
        const CpuProfile p = shipped(name);
        CHECK(p.name == name);
        CHECK(!p.description.empty());
        CHECK(p.source == kDir + "/" + name + ".json");
        CHECK(p.overrides.empty());
        const json doc = shipped_json(name);
        REQUIRE(doc.contains("sources"));
        for (const char* s : {"/cpuid", "/pmu", "/perf_capabilities", "/lbr", "/ds", "/tsc_hz",
                              "/bus_hz", "/latencies", "/branch_predictor", "/caches"})
            CHECK(doc["sources"].contains(s));
        // Every profile answers "GenuineIntel" and reports the DS feature.
        const CpuidLeaf l0 = p.query(0, 0);
        CHECK(l0.ebx == chars("Genu"));
        CHECK(l0.edx == chars("ineI"));
        CHECK(l0.ecx == chars("ntel"));
        CHECK(bit(p.query(1, 0).edx, 21));   // DS
        CHECK(!bit(p.query(1, 0).ecx, 21));  // x2APIC off
    }
}

TEST_CASE("list_profiles finds exactly the shipped profiles", "[profiles]") {
    const auto l = list_profiles({kDir});
    REQUIRE(l.size() == 4);
    for (size_t i = 0; i < 4; ++i) {
        CHECK(l[i].name == kShipped[i]);
        CHECK(l[i].path == kDir + "/" + kShipped[i] + ".json");
        CHECK(l[i].error.empty());
        CHECK(!l[i].description.empty());
    }
}

TEST_CASE("generic-intel.json answers CPUID exactly as the former built-in profile", "[profiles]") {
    const CpuProfile file = shipped("generic-intel");
    CHECK(file.cpuid == former_builtin_cpuid());
    CHECK(file.has_subleaves.empty());
    CHECK(file.physical_address_bits == 36);
    // The embedded copy is the same file.
    const CpuProfile& builtin = generic_intel_profile();
    CHECK(builtin.cpuid == file.cpuid);
    CHECK(builtin.document == file.document);
    CHECK(builtin.source == "<built-in>");
    // No leaf 0AH: no architectural PMU; BTS but no PEBS.
    CHECK(builtin.query(0x0A, 0) == CpuidLeaf{});
    CHECK(builtin.pmu.version == 0);
    CHECK(builtin.ds.bts);
    CHECK(!builtin.ds.pebs);
    CHECK(builtin.misc_enable_bits() == (1ull << 12));
}

TEST_CASE("westmere: the machine of the source documents", "[profiles]") {
    const CpuProfile p = shipped("westmere");
    // Leaf 0AH (seed 003; Bochs dump of a Core i5 M 520): version 3, 4 counters of 48
    // bits, 7 architectural events, reference cycles unavailable, 3 fixed of 48 bits.
    const CpuidLeaf a = p.query(0x0A, 0);
    CHECK(a.eax == (3u | 4u << 8 | 48u << 16 | 7u << 24));
    CHECK(a.eax == 0x07300403);
    CHECK(a.ebx == 0x00000004);
    CHECK(a.ecx == 0);
    CHECK(a.edx == (3u | 48u << 5));
    CHECK(a.edx == 0x00000603);
    CHECK(p.pmu.version == 3);
    CHECK(p.pmu.gp_counters == 4);
    CHECK(p.pmu.gp_width == 48);
    CHECK(p.pmu.fixed_counters == 3);
    CHECK(p.pmu.fixed_width == 48);
    CHECK(!p.pmu.event_available(ArchEvent::kRefCycles));
    CHECK(p.pmu.event_available(ArchEvent::kInstructions));
    CHECK(!p.pmu.event_available(ArchEvent::kTopdownSlots));
    REQUIRE(p.pmu.events.size() == 4);
    CHECK(p.pmu.events[0].name == "BR_INST_RETIRED.CONDITIONAL");
    CHECK(p.pmu.events[0].event == 0xC4);
    CHECK(p.pmu.events[0].umask == 0x01);
    CHECK(p.pmu.events[0].counts == EventCount::kBranchesConditional);
    // Leaf 1: signature 06_25H stepping 2; DS, DTES64, DS-CPL, PDCM; no x2APIC.
    const CpuidLeaf l1 = p.query(1, 0);
    CHECK(l1 == CpuidLeaf{0x00020652, 0x00000800, 0x0298A217, 0x0FABABFF});
    CHECK(p.family() == 6);
    CHECK(p.model() == 0x25);
    CHECK(p.stepping() == 2);
    CHECK(bit(l1.edx, 21));                      // DS
    CHECK(bit(l1.ecx, 2));                       // DTES64
    CHECK(bit(l1.ecx, 4));                       // DS-CPL
    CHECK(bit(l1.ecx, 15));                      // PDCM
    CHECK(!bit(l1.ecx, 21));                     // x2APIC
    CHECK(bit(p.query(0x80000001, 0).edx, 27));  // RDTSCP
    CHECK(p.query(7, 0) == CpuidLeaf{});         // no leaf-7 features
    CHECK(p.query(0x80000007, 0).edx == 0x100);  // invariant TSC
    // IA32_PERF_CAPABILITIES: LBR format 000011b, PEBS trap + arch regs, PEBS format 1
    // (enhanced, 176 bytes), freeze while SMM, no full-width writes.
    CHECK(p.perf_capabilities == 0x11C3);
    CHECK(p.lbr_format() == 3);
    CHECK(p.pebs_trap());
    CHECK(p.pebs_arch_regs());
    CHECK(p.pebs_format() == 1);
    CHECK(p.pebs_record_bytes(true) == 176);
    CHECK(p.freeze_while_smm());
    CHECK(!p.full_width_writes());
    // LBR: 16 entries at 680H/6C0H, TOS 1C9H, LBR_SELECT 1C8H, no LBR_INFO.
    CHECK(p.lbr.depth == 16);
    CHECK(p.lbr.from_base == 0x680);
    CHECK(p.lbr.to_base == 0x6C0);
    CHECK(!p.lbr.info_base);
    CHECK(p.lbr.tos == 0x1C9);
    CHECK(p.lbr.select == 0x1C8u);
    CHECK(p.lbr.ler_from == 0x1DD);
    CHECK(p.lbr.ler_to == 0x1DE);
    CHECK(!p.lbr.call_stack);
    // Debug Store.
    CHECK(p.ds.bts);
    CHECK(p.ds.pebs);
    CHECK(p.ds.pebs_gp_counters == 0xF);
    CHECK(p.ds.pebs_fixed_counters == 0);
    CHECK(p.ds.pebs_load_latency);
    CHECK(p.misc_enable_bits() == (1ull << 7));  // perfmon available, BTS and PEBS available
    // Clocks, caches, quirks.
    CHECK(p.tsc_hz == 2400000000ull);
    CHECK(p.core_hz == 2400000000ull);
    CHECK(p.bus_hz == 133333333ull);
    CHECK(p.physical_address_bits == 36);
    CHECK(p.caches.l1d.size == 32768);
    CHECK(p.caches.l1d.sets() == 64);
    CHECK(p.caches.l2.size == 262144);
    REQUIRE(p.caches.llc);
    CHECK(p.caches.llc->size == 3u << 20);
    CHECK(p.caches.llc->ways == 12);
    CHECK(p.has_quirk(Quirk::kBtsThresholdAboveMaxWestmere));
    CHECK(!p.has_quirk(Quirk::kV2FixedCountersNotEnumerated));
    CHECK(std::string(quirk_name(Quirk::kBtsThresholdAboveMaxWestmere)) ==
          "bts-threshold-above-max-westmere");
    CHECK(p.latencies.mispredict_penalty == 17);
    CHECK(p.branch_predictor.kind == BranchPredictorInfo::Kind::kGshare);
    CHECK(p.branch_predictor.entries == 8192);
}

TEST_CASE("core2: PMU version 2, 4 LBRs, PEBS format 0", "[profiles]") {
    const CpuProfile p = shipped("core2");
    // Exactly the Xeon X5482 dump's leaf 0AH.
    CHECK(p.query(0x0A, 0) == CpuidLeaf{0x07280202, 0, 0, 0x00000503});
    CHECK(p.pmu.version == 2);
    CHECK(p.pmu.gp_counters == 2);
    CHECK(p.pmu.gp_width == 40);
    CHECK(p.pmu.fixed_counters == 3);
    CHECK(p.pmu.fixed_width == 40);
    CHECK(p.query(1, 0) == CpuidLeaf{0x00010676, 0x00000800, 0x0008A215, 0x0FABABFF});
    CHECK(p.model() == 0x17);
    CHECK(!bit(p.query(0x80000001, 0).edx, 27));  // no RDTSCP before Nehalem
    CHECK(p.perf_capabilities == 0x10C2);
    CHECK(p.lbr_format() == 2);
    CHECK(p.pebs_format() == 0);
    CHECK(p.pebs_record_bytes(true) == 144);
    CHECK(p.pebs_record_bytes(false) == 40);
    CHECK(p.lbr.depth == 4);
    CHECK(p.lbr.from_base == 0x40);
    CHECK(p.lbr.to_base == 0x60);
    CHECK(!p.lbr.select);
    CHECK(p.ds.pebs_gp_counters == 0x1);
    CHECK(!p.ds.pebs_load_latency);
    CHECK(!p.caches.llc);
    CHECK(p.caches.l2.size == 6u << 20);
    CHECK(p.physical_address_bits == 38);
    CHECK(p.bus_hz == 400000000ull);
    CHECK(p.quirks.empty());
}

TEST_CASE("skylake: PMU version 4, 32 LBRs with LBR_INFO, PEBS format 3", "[profiles]") {
    const CpuProfile p = shipped("skylake");
    CHECK(p.query(0x0A, 0) == CpuidLeaf{0x07300404, 0, 0, 0x00000603});
    CHECK(p.model() == 0x5E);
    CHECK(p.stepping() == 3);
    CHECK(p.perf_capabilities == 0x33C5);
    CHECK(p.lbr_format() == 5);
    CHECK(p.pebs_format() == 3);
    CHECK(p.pebs_record_bytes(true) == 200);
    CHECK(p.full_width_writes());
    CHECK(p.freeze_while_smm());
    CHECK(p.lbr.depth == 32);
    CHECK(p.lbr.info_base == 0xDC0u);
    CHECK(p.lbr.call_stack);
    // Leaf 07H: TSC_ADJUST (EBX bit 1), FSGSBASE, SMEP, BMI1...; leaf 1: no x2APIC.
    const CpuidLeaf l7 = p.query(7, 0);
    CHECK(l7.ebx == 0x008C238B);
    CHECK(bit(l7.ebx, 1));
    CHECK(p.has_subleaves.at(7));
    CHECK(p.query(7, 1) == CpuidLeaf{});
    CHECK(!bit(p.query(1, 0).ecx, 21));
    CHECK(bit(p.query(0x80000001, 0).edx, 27));  // RDTSCP
    // TSC = 24 MHz crystal (the APIC timer clock) x CPUID.15H EBX/EAX.
    const CpuidLeaf l15 = p.query(0x15, 0);
    CHECK(p.tsc_hz == p.bus_hz * l15.ebx / l15.eax);
    CHECK(p.tsc_hz == 4008000000ull);
    CHECK(p.core_hz == u64(p.query(0x16, 0).eax) * 1000000);
    CHECK(p.physical_address_bits == 39);
    CHECK(p.caches.l2.ways == 4);
    CHECK(p.caches.llc->size == 8u << 20);
    REQUIRE(p.pmu.events.size() == 9);
    CHECK(p.pmu.events.back().counts == EventCount::kHwInterrupts);
    CHECK(std::string(event_count_name(p.pmu.events.back().counts)) == "hw-interrupts");
}

// ---- CPUID through the guest -----------------------------------------------------

TEST_CASE("a guest's CPUID returns the profile's answers", "[profiles]") {
    const std::vector<std::pair<u32, u32>> q = {
        {0, 0},          {1, 0},          {4, 0},         {4, 3},          {7, 0},
        {0x0A, 0},       {0x0B, 0},       {0x16, 0},      {0x80000000, 0}, {0x80000001, 0},
        {0x80000002, 0}, {0x80000008, 0}, {0x80000009, 0}};
    for (const char* name : kShipped) {
        INFO(name);
        const CpuProfile p = shipped(name);
        const auto got = guest_cpuid(p, q);
        for (size_t i = 0; i < q.size(); ++i) {
            INFO("leaf " << std::hex << q[i].first << "." << q[i].second);
            CHECK(got[i] == p.query(q[i].first, q[i].second));
        }
    }
    // Exact values seen by the guest.
    const CpuProfile w = shipped("westmere");
    const auto gw = guest_cpuid(w, {{0x0A, 0}, {1, 0}});
    CHECK(gw[0].eax == 0x07300403);
    CHECK(gw[0].edx == 0x00000603);
    CHECK(gw[1].eax == 0x00020652);
    const CpuProfile c2 = shipped("core2");
    // Core 2's maximum basic leaf is 0AH: leaf 0BH answers as leaf 0AH (SDM Vol. 2, CPUID).
    const auto gc = guest_cpuid(c2, {{0x0B, 0}, {0x80000009, 0}});
    CHECK(gc[0].eax == 0x07280202);
    CHECK(gc[1].eax == 0x07280202);
    const CpuProfile s = shipped("skylake");
    const auto gs = guest_cpuid(s, {{7, 0}, {0x0A, 0}});
    CHECK(gs[0].ebx == 0x008C238B);
    CHECK(gs[1].eax == 0x07300404);
}

TEST_CASE("the profile's signature is in EDX after RESET and its CPUID gates CR4 bits",
          "[profiles]") {
    const CpuProfile w = shipped("westmere"), s = shipped("skylake");
    for (const CpuProfile* p : {&w, &s}) {
        MachineConfig cfg;
        cfg.profile = p;
        Machine m(cfg);
        CHECK(m.cpu().gpr[RDX] == p->query(1, 0).eax);  // SDM Vol. 3, 9.1.1, Table 9-1
        // MOV CR4 with FSGSBASE (bit 16): allowed only where CPUID.07H:EBX[0] is set.
        const auto code = test::assemble(64, "mov rax, cr4\nbts rax, 16\nmov cr4, rax\nhlt\n");
        m.load(test::kCodeBase, code.data(), code.size());
        m.set_flat_mode(CodeBits::k64);
        m.cpu().rip = test::kCodeBase;
        const RunResult r = m.run(RunLimits{100});
        if (p == &w) {
            REQUIRE(r.reason == StopReason::kException);
            CHECK(r.fault->vector == 13);
        } else {
            CHECK(r.reason == StopReason::kHalt);
            CHECK(m.cpu().cr4 >> 16 & 1);
        }
    }
}

// ---- finding profiles ----------------------------------------------------------------

TEST_CASE("load_profile_by_name searches the directories in order", "[profiles]") {
    TempDir d;
    // A profile of the same name in an earlier directory wins.
    json doc = shipped_json("core2");
    doc["description"] = "local copy";
    d.write("core2.json", doc.dump());
    CHECK(load_profile_by_name("core2", {d.path.string(), kDir}).description == "local copy");
    CHECK(load_profile_by_name("core2", {kDir, d.path.string()}).description != "local copy");
    // A path is loaded as a path.
    CHECK(load_profile_by_name((d.path / "core2.json").string(), {}).description == "local copy");
    // generic-intel falls back to the built-in copy.
    const CpuProfile g = load_profile_by_name("generic-intel", {d.path.string()});
    CHECK(g.source == "<built-in>");
    CHECK(g.cpuid == former_builtin_cpuid());
}

TEST_CASE("default_profile_dirs: PMUSIM_PROFILE_PATH first, then the source tree", "[profiles]") {
    setenv("PMUSIM_PROFILE_PATH", "/tmp/a::/tmp/b", 1);
    const auto dirs = default_profile_dirs();
    unsetenv("PMUSIM_PROFILE_PATH");
    REQUIRE(dirs.size() >= 3);
    CHECK(dirs[0] == "/tmp/a");
    CHECK(dirs[1] == "/tmp/b");
    CHECK(dirs[2] == kDir);
    CHECK(dirs.back().find("share/pmusim/profiles") != std::string::npos);
    CHECK(load_profile_by_name("skylake").name == "skylake");  // the default search path works
}

// ---- overrides -----------------------------------------------------------------------

TEST_CASE("overrides: JSON pointers and merged objects, validated as a whole", "[profiles]") {
    CpuProfile p = shipped("westmere");
    apply_overrides(p, json{{"/lbr/depth", 8}, {"/tsc_hz", 1000000000}});
    CHECK(p.lbr.depth == 8);
    CHECK(p.tsc_hz == 1000000000);
    CHECK(p.pmu.gp_counters == 4);  // untouched
    // Merge form; CPUID leaf 0AH follows the PMU fields.
    apply_overrides(
        p, json::parse(R"({"pmu": {"gp_counters": 2}, "ds": {"pebs_gp_counters": "0x3"}})"));
    CHECK(p.pmu.gp_counters == 2);
    CHECK(p.query(0x0A, 0).eax == 0x07300203);
    CHECK(p.ds.pebs_gp_counters == 0x3);
    // A CPUID feature list, a quirk list, a nested value, a null.
    apply_overrides(
        p,
        json::parse(R"({"cpuid": {"leaves": {"01H": {"ecx": ["SSE3", "DTES64", "PDCM", "x2APIC"]}}},
                                       "quirks": [], "/caches/llc/latency": 40, "/lbr/select": null})"));
    CHECK(p.query(1, 0).ecx == ((1u << 0) | (1u << 2) | (1u << 15) | (1u << 21)));
    CHECK(p.query(1, 0).eax == 0x00020652);  // the rest of the leaf is kept
    CHECK(p.quirks.empty());
    CHECK(p.caches.llc->latency == 40);
    CHECK(!p.lbr.select);
    CHECK(p.overrides ==
          std::vector<std::string>{
              "/lbr/depth = 8", "/tsc_hz = 1000000000", "/ds/pebs_gp_counters = \"0x3\"",
              "/pmu/gp_counters = 2", "/caches/llc/latency = 40", "/lbr/select = null",
              "/cpuid/leaves/01H/ecx = [\"SSE3\",\"DTES64\",\"PDCM\",\"x2APIC\"]", "/quirks = []"});
    // A new CPUID leaf may be added.
    apply_overrides(p, json{{"/cpuid/leaves/05H", json{{"eax", "0x40"}}}});
    CHECK(p.query(5, 0).eax == 0x40);
    // The built-in profile takes overrides too.
    CpuProfile g = generic_intel_profile();
    apply_overrides(g, json{{"/ds/bts", false}});
    CHECK(!g.ds.bts);
    CHECK(g.misc_enable_bits() == ((1ull << 11) | (1ull << 12)));
}

TEST_CASE("overrides: bad values are errors with the path and leave the profile unchanged",
          "[profiles]") {
    CpuProfile p = shipped("westmere");
    const std::string label = kDir + "/westmere.json with overrides: ";
    CHECK(override_error(p, json{{"/pmu/gp_width", 65}}) ==
          label + "/pmu/gp_width: expected an integer 1..64, got 65");
    CHECK(override_error(p, json{{"pmu", json{{"gp_widht", 40}}}})
              .find(label + "/pmu/gp_widht: unknown key") == 0);
    CHECK(override_error(p, json{{"/nope/deeper", 1}}) ==
          label + "/nope/deeper: names no value of the profile");
    CHECK(override_error(p, json{{"/name", "x"}}) ==
          label + "/name: the profile name cannot be overridden");
    CHECK(override_error(p, json{{"/pmu/gp_counters", 2}}) ==
          label + "/ds/pebs_gp_counters: 0xF names counters beyond /pmu/gp_counters (2)");
    CHECK(override_error(p, json::array({1})) == label + "overrides: expected an object, got [1]");
    CHECK(p.pmu.gp_width == 48);
    CHECK(p.pmu.gp_counters == 4);
    CHECK(p.overrides.empty());
}

// ---- bad input: one case each ----------------------------------------------------------

TEST_CASE("bad input: malformed JSON reports line and column", "[profiles][bad-input]") {
    TempDir d;
    const std::string path = d.write("broken.json", "{\n  \"name\": \"broken\",\n  oops\n}\n");
    try {
        load_profile(path);
        FAIL("no error");
    } catch (const ProfileError& e) {
        CHECK(std::string(e.what()).find(
                  path + ": malformed JSON at line 3, column 3: syntax error") == 0);
        CHECK(e.file == path);
    }
}

TEST_CASE("bad input: unknown key with its path", "[profiles][bad-input]") {
    json doc = shipped_json("westmere");
    doc["lbr"]["deep"] = 32;
    CHECK(load_error(doc).find(
              "westmere.json: /lbr/deep: unknown key (expected one of: depth, from_base,") !=
          std::string::npos);
    doc = shipped_json("westmere");
    doc["pmus"] = json::object();
    CHECK(load_error(doc).find("westmere.json: /pmus: unknown key") != std::string::npos);
}

TEST_CASE("bad input: wrong type", "[profiles][bad-input]") {
    json doc = shipped_json("westmere");
    doc["pmu"]["gp_width"] = "wide";
    CHECK(load_error(doc).find(
              "westmere.json: /pmu/gp_width: expected an integer 1..64, got \"wide\"") !=
          std::string::npos);
    doc = shipped_json("westmere");
    doc["ds"]["bts"] = 1;
    CHECK(load_error(doc).find("westmere.json: /ds/bts: expected true or false, got 1") !=
          std::string::npos);
    doc = shipped_json("westmere");
    doc["lbr"] = json::array();
    CHECK(load_error(doc).find("westmere.json: /lbr: expected an object, got []") !=
          std::string::npos);
}

TEST_CASE("bad input: missing file", "[profiles][bad-input]") {
    try {
        load_profile("/nonexistent/dir/westmere.json");
        FAIL("no error");
    } catch (const ProfileError& e) {
        CHECK(std::string(e.what()) ==
              "/nonexistent/dir/westmere.json: cannot open the profile file (no such file)");
    }
}

TEST_CASE("bad input: unknown profile name", "[profiles][bad-input]") {
    try {
        load_profile_by_name("pentium9", {kDir});
        FAIL("no error");
    } catch (const ProfileError& e) {
        CHECK(std::string(e.what()) == "unknown CPU profile \"pentium9\" (searched: " + kDir +
                                           "; available: core2, generic-intel, skylake, westmere)");
    }
}

TEST_CASE("bad input: missing required key", "[profiles][bad-input]") {
    json doc = shipped_json("westmere");
    doc["pmu"].erase("gp_width");
    CHECK(load_error(doc).find("westmere.json: /pmu: missing required key \"gp_width\"") !=
          std::string::npos);
    doc = shipped_json("westmere");
    doc.erase("tsc_hz");
    CHECK(load_error(doc).find("westmere.json: missing required key \"tsc_hz\"") !=
          std::string::npos);
}

TEST_CASE("bad input: duplicate key", "[profiles][bad-input]") {
    TempDir d;
    std::string text = read_text(kDir + "/westmere.json");
    text.replace(text.find("\"depth\": 16,"), 12, "\"depth\": 16, \"depth\": 8,");
    const std::string path = d.write("westmere.json", text);
    try {
        load_profile(path);
        FAIL("no error");
    } catch (const ProfileError& e) {
        CHECK(std::string(e.what()) == path + ": /lbr/depth: duplicate key");
    }
    // Inside a list of objects, after other lists: the path counts the elements.
    text = read_text(kDir + "/westmere.json");
    text.replace(text.find("\"umask\": \"0x02\""), 15, "\"umask\": \"0x02\", \"umask\": 3");
    const std::string path2 = d.write("westmere.json", text);
    try {
        load_profile(path2);
        FAIL("no error");
    } catch (const ProfileError& e) {
        CHECK(std::string(e.what()) == path2 + ": /pmu/events/1/umask: duplicate key");
    }
}

TEST_CASE("bad input: name differs from the file name", "[profiles][bad-input]") {
    CHECK(load_error(shipped_json("westmere"), "nehalem")
              .find("nehalem.json: /name: expected \"nehalem\" (the file name without .json), got "
                    "\"westmere\"") != std::string::npos);
}

TEST_CASE("bad input: CPUID leaves", "[profiles][bad-input]") {
    json doc = shipped_json("westmere");
    doc["cpuid"]["leaves"]["01H"]["ecx"].push_back("SSE5");
    CHECK(load_error(doc).find(
              "/cpuid/leaves/01H/ecx/11: unknown feature name \"SSE5\" for CPUID.01H:ECX") !=
          std::string::npos);
    doc = shipped_json("westmere");
    doc["cpuid"]["leaves"]["0AH"] = json{{"eax", 0}};
    CHECK(load_error(doc).find("/cpuid/leaves/0AH: generated from /pmu; remove it") !=
          std::string::npos);
    doc = shipped_json("westmere");
    doc["cpuid"]["leaves"]["1H"] = json::object();
    CHECK(load_error(doc).find("/cpuid/leaves/1H: expected a leaf key such as \"01H\"") !=
          std::string::npos);
    doc = shipped_json("westmere");
    doc["cpuid"]["leaves"]["0DH"] = json::object();
    CHECK(load_error(doc).find("/cpuid/leaves/0DH: above /cpuid/max_basic_leaf (0xB)") !=
          std::string::npos);
    doc = shipped_json("westmere");
    doc["cpuid"]["leaves"]["02H"]["ebx"] = "0x1FFFFFFFF";
    CHECK(load_error(doc).find("/cpuid/leaves/02H/ebx: expected an integer 0x0..0xFFFFFFFF") !=
          std::string::npos);
    doc = shipped_json("westmere");
    doc["cpuid"]["leaves"]["80000008H"]["eax"] = "0x3010";
    CHECK(load_error(doc).find(
              "/cpuid/leaves/80000008H/eax: MAXPHYADDR (bits 7:0) must be 32..52, got 16") !=
          std::string::npos);
}

TEST_CASE("bad input: sections that contradict each other", "[profiles][bad-input]") {
    json doc = shipped_json("westmere");
    doc["caches"]["l2"]["size"] = 524288;
    CHECK(load_error(doc).find(
              "/caches/l2: disagrees with CPUID.04H.2 (262144 bytes, 8 ways, 64-byte lines)") !=
          std::string::npos);
    doc = shipped_json("westmere");
    doc["perf_capabilities"] = "0x11C5";  // LBR format 5 needs LBR_INFO
    CHECK(load_error(doc).find("/lbr/info_base: LBR format 5 needs the MSR_LBR_INFO_0 address") !=
          std::string::npos);
    doc = shipped_json("westmere");
    doc["cpuid"]["leaves"]["01H"]["edx"] = json::array({"FPU", "TSC", "MSR"});  // no DS
    CHECK(load_error(doc).find("/ds/bts: BTS and PEBS need CPUID.01H:EDX.DS (bit 21)") !=
          std::string::npos);
    doc = shipped_json("skylake");
    doc["tsc_hz"] = 4000000000ull;
    doc["cpuid"]["leaves"]["15H"]["ecx"] = "0x016E3600";  // 24 MHz enumerated
    CHECK(load_error(doc, "skylake").find("/tsc_hz: disagrees with CPUID.15H (4008000000 Hz)") !=
          std::string::npos);
    doc = shipped_json("westmere");
    doc["sources"]["/lbr/deep"] = "nowhere";
    CHECK(
        load_error(doc).find("/sources/~1lbr~1deep: \"/lbr/deep\" names no value of the profile") !=
        std::string::npos);
    doc = shipped_json("westmere");
    doc["quirks"] = json::array({"fast-mode"});
    CHECK(load_error(doc).find("/quirks/0: unknown quirk \"fast-mode\"") != std::string::npos);
}

TEST_CASE("quirk v2-fixed-counters-not-enumerated: leaf 0AH EDX reads 0", "[profiles]") {
    // The first Core 2 (06_0FH, VirtualBox dump of a Core 2 X6800): CPUID.0AH EDX = 0
    // although the three fixed counters exist.
    CpuProfile p = shipped("core2");
    apply_overrides(p, json{{"/quirks", json::array({"v2-fixed-counters-not-enumerated"})}});
    CHECK(p.query(0x0A, 0) == CpuidLeaf{0x07280202, 0, 0, 0});
    CHECK(p.pmu.fixed_counters == 3);
}
