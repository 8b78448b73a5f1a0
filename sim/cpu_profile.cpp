#include "sim/cpu_profile.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "generic_intel_json.h"  // generated from sim/profiles/generic-intel.json: kGenericIntelJson

namespace pmusim {

using nlohmann::json;
namespace fs = std::filesystem;

ProfileError::ProfileError(const std::string& file, const std::string& path, const std::string& msg)
    : std::runtime_error((file.empty() ? "" : file + ": ") + (path.empty() ? "" : path + ": ") +
                         msg),
      file(file),
      path(path) {}

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

bool CpuProfile::has_quirk(Quirk q) const {
    return std::find(quirks.begin(), quirks.end(), q) != quirks.end();
}

u32 CpuProfile::family() const {
    const u32 eax = query(1, 0).eax;
    const u32 base = eax >> 8 & 0xF;
    return base == 0xF ? base + (eax >> 20 & 0xFF) : base;
}

u32 CpuProfile::model() const {
    const u32 eax = query(1, 0).eax;
    const u32 base = eax >> 8 & 0xF;
    return (eax >> 4 & 0xF) | ((base == 6 || base == 0xF) ? (eax >> 16 & 0xF) << 4 : 0);
}

u32 CpuProfile::stepping() const { return query(1, 0).eax & 0xF; }

u32 CpuProfile::pebs_record_bytes(bool ds64) const {
    switch (pebs_format()) {
        case 0:
            return ds64 ? 144 : 40;
        case 1:
            return 176;
        case 2:
            return 192;
        case 3:
            return 200;
        default:
            return 0;
    }
}

u64 CpuProfile::misc_enable_bits() const {
    return (pmu.version ? 1ull << 7 : 0) | (ds.bts ? 0 : 1ull << 11) | (ds.pebs ? 0 : 1ull << 12);
}

namespace {

// ---- names ------------------------------------------------------------------

const char* const kArchEventNames[] = {"core-cycles",    "instructions", "ref-cycles",
                                       "llc-references", "llc-misses",   "branches",
                                       "branch-misses",  "topdown-slots"};

const char* const kEventCountNames[] = {
    "instructions",         "core-cycles",    "ref-cycles",
    "llc-references",       "llc-misses",     "branches",
    "branch-misses",        "branches-taken", "branches-not-taken",
    "branches-conditional", "near-calls",     "near-returns",
    "far-branches",         "loads",          "stores",
    "hw-interrupts"};

const char* const kQuirkNames[] = {"bts-threshold-above-max-westmere",
                                   "v2-fixed-counters-not-enumerated"};

// CPUID feature-bit names, by bit (SDM Vol. 2, CPUID, Tables 3-10, 3-11 and 3-8).
// Only bits whose meaning is settled are named; others can be given as numbers.
using BitNames = const char* const[32];
// clang-format off
BitNames kLeaf1Ecx = {
    /*  0 */ "SSE3", "PCLMULQDQ", "DTES64", "MONITOR", "DS-CPL", "VMX", "SMX", "EST",
    /*  8 */ "TM2", "SSSE3", "CNXT-ID", "SDBG", "FMA", "CX16", "xTPR", "PDCM",
    /* 16 */ nullptr, "PCID", "DCA", "SSE4.1", "SSE4.2", "x2APIC", "MOVBE", "POPCNT",
    /* 24 */ "TSC-DEADLINE", "AES", "XSAVE", "OSXSAVE", "AVX", "F16C", "RDRAND", nullptr,
};
BitNames kLeaf1Edx = {
    /*  0 */ "FPU", "VME", "DE", "PSE", "TSC", "MSR", "PAE", "MCE",
    /*  8 */ "CX8", "APIC", nullptr, "SEP", "MTRR", "PGE", "MCA", "CMOV",
    /* 16 */ "PAT", "PSE-36", "PSN", "CLFSH", nullptr, "DS", "ACPI", "MMX",
    /* 24 */ "FXSR", "SSE", "SSE2", "SS", "HTT", "TM", nullptr, "PBE",
};
BitNames kLeaf7Ebx = {
    /*  0 */ "FSGSBASE", "TSC_ADJUST", "SGX", "BMI1", "HLE", "AVX2", "FDP_EXCPTN_ONLY", "SMEP",
    /*  8 */ "BMI2", "ERMS", "INVPCID", "RTM", "RDT-M", "FPU-CS-DS-DEPRECATED", "MPX", "RDT-A",
    /* 16 */ "AVX512F", "AVX512DQ", "RDSEED", "ADX", "SMAP", "AVX512_IFMA", nullptr, "CLFLUSHOPT",
    /* 24 */ "CLWB", "PT", "AVX512PF", "AVX512ER", "AVX512CD", "SHA", "AVX512BW", "AVX512VL",
};
BitNames kLeaf7Ecx = {
    /*  0 */ "PREFETCHWT1", "AVX512_VBMI", "UMIP", "PKU", "OSPKE", nullptr, nullptr, nullptr,
    /*  8 */ nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
    /* 16 */ nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, "RDPID", nullptr,
    /* 24 */ nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
};
BitNames kExt1Ecx = {
    /*  0 */ "LAHF-SAHF", nullptr, nullptr, nullptr, nullptr, "LZCNT", nullptr, nullptr,
    /*  8 */ "PREFETCHW", nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
    /* 16 */ nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
    /* 24 */ nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
};
BitNames kExt1Edx = {
    /*  0 */ nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
    /*  8 */ nullptr, nullptr, nullptr, "SYSCALL", nullptr, nullptr, nullptr, nullptr,
    /* 16 */ nullptr, nullptr, nullptr, nullptr, "NX", nullptr, nullptr, nullptr,
    /* 24 */ nullptr, nullptr, "PAGE1GB", "RDTSCP", nullptr, "LM", nullptr, nullptr,
};
// clang-format on

const char* const* feature_names(u32 leaf, u32 subleaf, int reg) {
    if (leaf == 1 && reg == 2) return kLeaf1Ecx;
    if (leaf == 1 && reg == 3) return kLeaf1Edx;
    if (leaf == 7 && subleaf == 0 && reg == 1) return kLeaf7Ebx;
    if (leaf == 7 && subleaf == 0 && reg == 2) return kLeaf7Ecx;
    if (leaf == 0x80000001 && reg == 2) return kExt1Ecx;
    if (leaf == 0x80000001 && reg == 3) return kExt1Edx;
    return nullptr;
}

// ---- helpers ------------------------------------------------------------------

std::string escape_key(const std::string& k) {
    std::string r;
    for (char c : k) {
        if (c == '~')
            r += "~0";
        else if (c == '/')
            r += "~1";
        else
            r += c;
    }
    return r;
}

std::string hex(u64 v, int digits = 0) {
    std::ostringstream o;
    o << "0x" << std::uppercase << std::hex;
    if (digits) o.width(digits), o.fill('0');
    o << v;
    return o.str();
}

std::string leaf_text(u32 leaf) {
    std::ostringstream o;
    o << std::uppercase << std::hex;
    o.width(leaf >= 0x80000000 ? 8 : 2);
    o.fill('0');
    o << leaf << 'H';
    return o.str();
}

std::string show(const json& v) {
    std::string s = v.dump();
    if (s.size() > 48) s = s.substr(0, 45) + "...";
    return s;
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
    std::string r;
    for (size_t i = 0; i < v.size(); ++i) r += (i ? sep : "") + v[i];
    return r;
}

bool is_pow2(u64 v) { return v && !(v & (v - 1)); }

/// Reading context: the label errors start with.
struct Ctx {
    std::string label;
    [[noreturn]] void fail(const std::string& path, const std::string& msg) const {
        throw ProfileError(label, path, msg);
    }
};

/// A JSON object with a fixed set of keys: unknown keys are errors.
class Obj {
  public:
    Obj(const Ctx& c, const json& j, std::string path, std::initializer_list<const char*> known)
        : c_(c), j_(j), path_(std::move(path)) {
        if (!j.is_object()) c.fail(path_, "expected an object, got " + show(j));
        for (const auto& [k, v] : j.items()) {
            bool ok = false;
            for (const char* n : known) ok = ok || k == n;
            if (!ok) {
                std::vector<std::string> names(known.begin(), known.end());
                c.fail(sub(k), "unknown key (expected one of: " + join(names) + ")");
            }
        }
    }
    bool has(const char* k) const { return j_.contains(k); }
    const json& at(const char* k) const {
        if (!j_.contains(k)) c_.fail(path_, std::string("missing required key \"") + k + "\"");
        return j_.at(k);
    }
    std::string sub(const std::string& k) const { return path_ + "/" + escape_key(k); }

  private:
    const Ctx& c_;
    const json& j_;
    std::string path_;
};

std::string range_text(u64 lo, u64 hi) {
    auto t = [&](u64 v) { return hi > 0xFFFF ? hex(v) : std::to_string(v); };
    return t(lo) + ".." + t(hi);
}

/// An unsigned integer: a JSON number or a "0x..." hex string, within lo..hi.
u64 read_uint(const Ctx& c, const json& v, const std::string& path, u64 lo, u64 hi) {
    u64 r = 0;
    bool ok = false;
    if (v.is_number_unsigned()) {
        r = v.get<u64>(), ok = true;
    } else if (v.is_number_integer()) {
        const i64 n = v.get<i64>();
        if (n >= 0) r = u64(n), ok = true;
    } else if (v.is_string()) {
        const std::string s = v.get<std::string>();
        if (s.size() > 2 && s.size() <= 18 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') &&
            std::all_of(s.begin() + 2, s.end(), [](char ch) { return std::isxdigit(u8(ch)); })) {
            r = std::stoull(s.substr(2), nullptr, 16), ok = true;
        }
    }
    if (!ok || r < lo || r > hi)
        c.fail(path, "expected an integer " + range_text(lo, hi) + ", got " + show(v));
    return r;
}

u64 read_uint(const Ctx& c, const Obj& o, const char* key, u64 lo, u64 hi) {
    return read_uint(c, o.at(key), o.sub(key), lo, hi);
}

bool read_bool(const Ctx& c, const Obj& o, const char* key) {
    const json& v = o.at(key);
    if (!v.is_boolean()) c.fail(o.sub(key), "expected true or false, got " + show(v));
    return v.get<bool>();
}

std::string read_string(const Ctx& c, const Obj& o, const char* key) {
    const json& v = o.at(key);
    if (!v.is_string()) c.fail(o.sub(key), "expected a string, got " + show(v));
    return v.get<std::string>();
}

/// An MSR address or null.
std::optional<u32> read_msr_or_null(const Ctx& c, const Obj& o, const char* key) {
    const json& v = o.at(key);
    if (v.is_null()) return std::nullopt;
    return u32(read_uint(c, v, o.sub(key), 0, 0xFFFFFFFF));
}

/// Index of `name` in `names[0..n)`, or -1.
int find_name(const char* const* names, size_t n, const std::string& name) {
    for (size_t i = 0; i < n; ++i)
        if (names[i] && name == names[i]) return int(i);
    return -1;
}

std::string known_names(const char* const* names, size_t n) {
    std::vector<std::string> v;
    for (size_t i = 0; i < n; ++i)
        if (names[i]) v.push_back(names[i]);
    return join(v);
}

// ---- parsing the text ------------------------------------------------------------

/// Parses JSON text; malformed JSON and duplicate keys are errors with position or path.
json parse_text(const std::string& text, const std::string& label) {
    struct Frame {
        bool array = false;
        size_t index = 0;
        std::string key, ptr;
        std::set<std::string> keys;
    };
    std::vector<Frame> st;
    std::optional<ProfileError> dup;
    auto cb = [&](int, json::parse_event_t ev, json& parsed) {
        switch (ev) {
            case json::parse_event_t::object_start:
            case json::parse_event_t::array_start: {
                std::string ptr;
                if (!st.empty()) {
                    const Frame& f = st.back();
                    ptr = f.ptr + "/" + (f.array ? std::to_string(f.index) : escape_key(f.key));
                }
                Frame f;
                f.array = ev == json::parse_event_t::array_start;
                f.ptr = ptr;
                st.push_back(std::move(f));
                break;
            }
            case json::parse_event_t::key: {
                Frame& f = st.back();
                f.key = parsed.get<std::string>();
                if (!f.keys.insert(f.key).second && !dup)
                    dup.emplace(label, f.ptr + "/" + escape_key(f.key), "duplicate key");
                break;
            }
            case json::parse_event_t::object_end:
            case json::parse_event_t::array_end:
                st.pop_back();
                if (!st.empty() && st.back().array) ++st.back().index;
                break;
            case json::parse_event_t::value:
                if (!st.empty() && st.back().array) ++st.back().index;
                break;
        }
        return true;
    };
    json doc;
    try {
        doc = json::parse(text, cb);
    } catch (const json::parse_error& e) {
        // what(): "[json.exception.parse_error.101] parse error at line L, column C: <detail>"
        std::string w = e.what();
        const size_t at = w.find("at line ");
        if (at != std::string::npos) {
            const size_t colon = w.find(": ", at);
            if (colon != std::string::npos)
                throw ProfileError(
                    label, "",
                    "malformed JSON " + w.substr(at, colon - at) + ": " + w.substr(colon + 2));
        }
        throw ProfileError(label, "",
                           "malformed JSON at byte " + std::to_string(e.byte) + ": " + w);
    }
    if (dup) throw *dup;
    return doc;
}

// ---- the profile sections ----------------------------------------------------------

struct LeafKey {
    u32 leaf, subleaf;
    bool has_sub;
};

std::optional<LeafKey> parse_leaf_key(const std::string& k) {
    size_t dot = k.find('.');
    const std::string head = k.substr(0, dot);
    if (head.size() != 3 && head.size() != 9) return std::nullopt;
    if (head.back() != 'H') return std::nullopt;
    const std::string digits = head.substr(0, head.size() - 1);
    for (char ch : digits)
        if (!std::isxdigit(u8(ch)) || std::islower(u8(ch))) return std::nullopt;
    const u32 leaf = u32(std::stoul(digits, nullptr, 16));
    if (digits.size() == 8 && leaf < 0x80000000) return std::nullopt;
    LeafKey r{leaf, 0, false};
    if (dot != std::string::npos) {
        const std::string s = k.substr(dot + 1);
        if (s.empty() || s.size() > 3 ||
            !std::all_of(s.begin(), s.end(), [](char ch) { return std::isdigit(u8(ch)); }))
            return std::nullopt;
        r.subleaf = u32(std::stoul(s)), r.has_sub = true;
    }
    return r;
}

u32 chars4(const std::string& s, size_t at) {
    u32 v = 0;
    for (size_t i = 0; i < 4; ++i) v |= u32(at + i < s.size() ? u8(s[at + i]) : 0) << (8 * i);
    return v;
}

/// A CPUID register: a number, a "0x..." string, or (for feature leaves) a list of names.
u32 read_register(const Ctx& c, const json& v, const std::string& path, u32 leaf, u32 subleaf,
                  int reg, const std::string& what) {
    if (!v.is_array()) return u32(read_uint(c, v, path, 0, 0xFFFFFFFF));
    const char* const* names = feature_names(leaf, subleaf, reg);
    if (!names)
        c.fail(path,
               "expected an integer or a \"0x...\" string (" + what + " has no feature names)");
    u32 r = 0;
    for (size_t i = 0; i < v.size(); ++i) {
        const std::string p = path + "/" + std::to_string(i);
        if (!v[i].is_string())
            c.fail(p, "expected a feature name of " + what + ", got " + show(v[i]));
        const int bit = find_name(names, 32, v[i].get<std::string>());
        if (bit < 0)
            c.fail(p, "unknown feature name \"" + v[i].get<std::string>() + "\" for " + what +
                          " (known: " + known_names(names, 32) + ")");
        if (r >> bit & 1) c.fail(p, "feature \"" + v[i].get<std::string>() + "\" listed twice");
        r |= 1u << bit;
    }
    return r;
}

struct CpuidMeta {
    u32 max_basic = 0, max_ext = 0;
};

CpuidMeta read_cpuid(const Ctx& c, const json& j, CpuProfile& p) {
    Obj o(c, j, "/cpuid", {"vendor", "max_basic_leaf", "max_extended_leaf", "brand", "leaves"});
    CpuidMeta m;
    const std::string vendor = read_string(c, o, "vendor");
    if (vendor.size() != 12)
        c.fail(o.sub("vendor"),
               "expected 12 characters (e.g. \"GenuineIntel\"), got " + show(o.at("vendor")));
    m.max_basic = u32(read_uint(c, o, "max_basic_leaf", 1, 0xFF));
    m.max_ext = u32(read_uint(c, o, "max_extended_leaf", 0x80000000, 0x800000FF));
    // Leaf 0 (SDM Vol. 2, CPUID): maximum basic leaf, vendor string in EBX, EDX, ECX.
    p.cpuid[{0, 0}] = {m.max_basic, chars4(vendor, 0), chars4(vendor, 8), chars4(vendor, 4)};
    p.cpuid[{0x80000000, 0}] = {m.max_ext, 0, 0, 0};
    if (m.max_ext >= 0x80000004) {
        const std::string brand = read_string(c, o, "brand");
        if (brand.size() > 47 || !std::all_of(brand.begin(), brand.end(),
                                              [](char ch) { return ch >= 0x20 && ch < 0x7F; }))
            c.fail(o.sub("brand"),
                   "expected at most 47 printable ASCII characters, got " + show(o.at("brand")));
        // 80000002H-80000004H: the 48-byte NUL-terminated brand string in EAX EBX ECX EDX.
        for (u32 k = 0; k < 3; ++k)
            p.cpuid[{0x80000002 + k, 0}] = {chars4(brand, 16 * k), chars4(brand, 16 * k + 4),
                                            chars4(brand, 16 * k + 8), chars4(brand, 16 * k + 12)};
    } else if (o.has("brand")) {
        c.fail(o.sub("brand"), "a brand string needs /cpuid/max_extended_leaf >= 0x80000004");
    }

    const json& lj = o.at("leaves");
    const std::string lpath = o.sub("leaves");
    if (!lj.is_object())
        c.fail(lpath,
               "expected an object keyed by leaf (\"01H\", \"04H.0\", ...), got " + show(lj));
    std::map<u32, bool> keyed_by_subleaf;
    for (const auto& [k, v] : lj.items()) {
        const std::string path = lpath + "/" + escape_key(k);
        const auto key = parse_leaf_key(k);
        if (!key)
            c.fail(path,
                   "expected a leaf key such as \"01H\", \"04H.1\" or \"80000001H\" (hex digits in "
                   "upper case)");
        const u32 leaf = key->leaf;
        if (leaf == 0 || leaf == 0x80000000)
            c.fail(path, "generated from /cpuid/vendor and the maximum leaves; remove it");
        if (leaf >= 0x80000002 && leaf <= 0x80000004)
            c.fail(path, "generated from /cpuid/brand; remove it");
        if (leaf == 0x0A) c.fail(path, "generated from /pmu; remove it");
        if (leaf < 0x80000000 && leaf > m.max_basic)
            c.fail(path, "above /cpuid/max_basic_leaf (" + hex(m.max_basic) + ")");
        if (leaf >= 0x80000000 && leaf > m.max_ext)
            c.fail(path, "above /cpuid/max_extended_leaf (" + hex(m.max_ext) + ")");
        auto seen = keyed_by_subleaf.find(leaf);
        if (seen != keyed_by_subleaf.end() && seen->second != key->has_sub)
            c.fail(path, "leaf " + leaf_text(leaf) + " is given both with and without a subleaf");
        keyed_by_subleaf[leaf] = key->has_sub;
        const Obj r(c, v, path, {"eax", "ebx", "ecx", "edx"});
        CpuidLeaf out;
        u32* regs[4] = {&out.eax, &out.ebx, &out.ecx, &out.edx};
        const char* names[4] = {"eax", "ebx", "ecx", "edx"};
        for (int i = 0; i < 4; ++i) {
            if (!r.has(names[i])) continue;
            std::string what = "CPUID." + leaf_text(leaf) +
                               (key->has_sub ? "." + std::to_string(key->subleaf) : "") + ":" +
                               std::string(names[i]);
            std::transform(what.end() - 3, what.end(), what.end() - 3, ::toupper);
            *regs[i] =
                read_register(c, r.at(names[i]), r.sub(names[i]), leaf, key->subleaf, i, what);
        }
        p.cpuid[{leaf, key->subleaf}] = out;
        if (key->has_sub) p.has_subleaves[leaf] = true;
    }
    if (p.cpuid.count({0x80000008, 0})) {
        const u32 bits = p.cpuid.at({0x80000008, 0}).eax & 0xFF;
        if (bits < 32 || bits > 52)
            c.fail(lpath + "/80000008H/eax",
                   "MAXPHYADDR (bits 7:0) must be 32..52, got " + std::to_string(bits));
        p.physical_address_bits = u8(bits);
    }
    return m;
}

bool cpuid_bit(const CpuProfile& p, u32 leaf, int reg, int bit) {
    const CpuidLeaf l = p.query(leaf, 0);
    const u32 regs[4] = {l.eax, l.ebx, l.ecx, l.edx};
    return regs[reg] >> bit & 1;
}

void read_pmu(const Ctx& c, const json& j, CpuProfile& p) {
    if (j.is_null()) return;  // no architectural performance monitoring
    const Obj o(c, j, "/pmu",
                {"version", "gp_counters", "gp_width", "fixed_counters", "fixed_width",
                 "arch_events", "unavailable_events", "events"});
    PmuInfo& m = p.pmu;
    m.version = u8(read_uint(c, o, "version", 1, 5));
    m.gp_counters = u8(read_uint(c, o, "gp_counters", 1, 32));
    m.gp_width = u8(read_uint(c, o, "gp_width", 1, 64));
    m.fixed_counters = u8(read_uint(c, o, "fixed_counters", 0, m.version >= 2 ? 15 : 0));
    if (m.fixed_counters)
        m.fixed_width = u8(read_uint(c, o, "fixed_width", 1, 64));
    else
        m.fixed_width = u8(read_uint(c, o, "fixed_width", 0, 0));
    m.arch_events = u8(read_uint(c, o, "arch_events", 0, 8));
    const json& ue = o.at("unavailable_events");
    if (!ue.is_array())
        c.fail(o.sub("unavailable_events"),
               "expected a list of architectural event names, got " + show(ue));
    for (size_t i = 0; i < ue.size(); ++i) {
        const std::string path = o.sub("unavailable_events") + "/" + std::to_string(i);
        const int n = ue[i].is_string()
                          ? find_name(kArchEventNames, m.arch_events, ue[i].get<std::string>())
                          : -1;
        if (n < 0)
            c.fail(path, "expected one of the first " + std::to_string(m.arch_events) +
                             " architectural events (" +
                             known_names(kArchEventNames, m.arch_events) + "), got " + show(ue[i]));
        m.unavailable_events |= 1u << n;
    }
    const json& ev = o.at("events");
    if (!ev.is_array()) c.fail(o.sub("events"), "expected a list of events, got " + show(ev));
    std::set<std::pair<u8, u8>> seen;
    for (size_t i = 0; i < ev.size(); ++i) {
        const Obj e(c, ev[i], o.sub("events") + "/" + std::to_string(i),
                    {"name", "event", "umask", "counts"});
        PmuEvent pe;
        pe.name = read_string(c, e, "name");
        pe.event = u8(read_uint(c, e, "event", 0, 0xFF));
        pe.umask = u8(read_uint(c, e, "umask", 0, 0xFF));
        const json& cn = e.at("counts");
        const int k = cn.is_string() ? find_name(kEventCountNames, std::size(kEventCountNames),
                                                 cn.get<std::string>())
                                     : -1;
        if (k < 0)
            c.fail(e.sub("counts"), "expected one of: " +
                                        known_names(kEventCountNames, std::size(kEventCountNames)) +
                                        "; got " + show(cn));
        pe.counts = EventCount(k);
        if (!seen.insert({pe.event, pe.umask}).second)
            c.fail(e.sub("umask"),
                   "event " + hex(pe.event, 2) + " umask " + hex(pe.umask, 2) + " listed twice");
        m.events.push_back(std::move(pe));
    }
}

void read_lbr(const Ctx& c, const json& j, CpuProfile& p) {
    const Obj o(c, j, "/lbr",
                {"depth", "from_base", "to_base", "info_base", "tos", "select", "ler_from",
                 "ler_to", "call_stack"});
    LbrInfo& l = p.lbr;
    const u64 depth = read_uint(c, o, "depth", 1, 64);
    if (!is_pow2(depth))
        c.fail(o.sub("depth"), "expected a power of two 1..64, got " + show(o.at("depth")));
    l.depth = u8(depth);
    l.from_base = u32(read_uint(c, o, "from_base", 0, 0xFFFFFFFF));
    l.to_base = u32(read_uint(c, o, "to_base", 0, 0xFFFFFFFF));
    l.info_base = read_msr_or_null(c, o, "info_base");
    l.tos = u32(read_uint(c, o, "tos", 0, 0xFFFFFFFF));
    l.select = read_msr_or_null(c, o, "select");
    l.ler_from = u32(read_uint(c, o, "ler_from", 0, 0xFFFFFFFF));
    l.ler_to = u32(read_uint(c, o, "ler_to", 0, 0xFFFFFFFF));
    l.call_stack = read_bool(c, o, "call_stack");
    if (l.call_stack && !l.select)
        c.fail(o.sub("call_stack"), "call-stack mode needs an LBR_SELECT MSR (/lbr/select)");
}

void read_ds(const Ctx& c, const json& j, CpuProfile& p) {
    const Obj o(c, j, "/ds",
                {"bts", "pebs", "pebs_gp_counters", "pebs_fixed_counters", "pebs_load_latency"});
    DsInfo& d = p.ds;
    d.bts = read_bool(c, o, "bts");
    d.pebs = read_bool(c, o, "pebs");
    d.pebs_gp_counters = u32(read_uint(c, o, "pebs_gp_counters", 0, 0xFFFFFFFF));
    d.pebs_fixed_counters = u32(read_uint(c, o, "pebs_fixed_counters", 0, 0xFFFFFFFF));
    d.pebs_load_latency = read_bool(c, o, "pebs_load_latency");
}

void read_latencies(const Ctx& c, const json& j, CpuProfile& p) {
    struct Field {
        const char* name;
        u32 Latencies::*member;
    };
    static const Field fields[] = {
        {"alu", &Latencies::alu},
        {"cmov", &Latencies::cmov},
        {"shift", &Latencies::shift},
        {"imul", &Latencies::imul},
        {"div32", &Latencies::div32},
        {"div64", &Latencies::div64},
        {"store", &Latencies::store},
        {"branch", &Latencies::branch},
        {"branch_taken", &Latencies::branch_taken},
        {"call_ret", &Latencies::call_ret},
        {"mispredict_penalty", &Latencies::mispredict_penalty},
        {"string_iteration", &Latencies::string_iteration},
        {"serializing", &Latencies::serializing},
        {"interrupt", &Latencies::interrupt},
        {"memory", &Latencies::memory},
        {"other", &Latencies::other},
    };
    const Obj o(c, j, "/latencies",
                {"alu", "cmov", "shift", "imul", "div32", "div64", "store", "branch",
                 "branch_taken", "call_ret", "mispredict_penalty", "string_iteration",
                 "serializing", "interrupt", "memory", "other"});
    for (const Field& f : fields) p.latencies.*f.member = u32(read_uint(c, o, f.name, 0, 100000));
}

void read_branch_predictor(const Ctx& c, const json& j, CpuProfile& p) {
    const Obj o(c, j, "/branch_predictor", {"kind", "entries", "history_bits"});
    BranchPredictorInfo& b = p.branch_predictor;
    const std::string kind = read_string(c, o, "kind");
    if (kind == "bimodal")
        b.kind = BranchPredictorInfo::Kind::kBimodal;
    else if (kind == "gshare")
        b.kind = BranchPredictorInfo::Kind::kGshare;
    else
        c.fail(o.sub("kind"), "expected \"bimodal\" or \"gshare\", got " + show(o.at("kind")));
    const u64 entries = read_uint(c, o, "entries", 16, 1u << 24);
    if (!is_pow2(entries))
        c.fail(o.sub("entries"), "expected a power of two, got " + show(o.at("entries")));
    b.entries = u32(entries);
    int log2 = 0;
    while ((1ull << log2) < entries) ++log2;
    b.history_bits = u8(read_uint(c, o, "history_bits", 0,
                                  b.kind == BranchPredictorInfo::Kind::kBimodal ? 0 : log2));
}

CacheLevel read_cache(const Ctx& c, const json& j, const std::string& path) {
    const Obj o(c, j, path, {"size", "ways", "line", "latency"});
    CacheLevel l;
    l.size = read_uint(c, o, "size", 1, 1ull << 40);
    l.ways = u32(read_uint(c, o, "ways", 1, 64));
    l.line = u32(read_uint(c, o, "line", 16, 512));
    if (!is_pow2(l.line))
        c.fail(o.sub("line"), "expected a power of two, got " + show(o.at("line")));
    l.latency = u32(read_uint(c, o, "latency", 0, 100000));
    const u64 way_bytes = u64(l.ways) * l.line;
    if (l.size % way_bytes)
        c.fail(o.sub("size"),
               "must be a multiple of ways x line (" + std::to_string(way_bytes) + ")");
    if (!is_pow2(l.sets()))
        c.fail(o.sub("size"),
               "gives " + std::to_string(l.sets()) + " sets; expected a power of two");
    return l;
}

void read_caches(const Ctx& c, const json& j, CpuProfile& p) {
    const Obj o(c, j, "/caches", {"l1d", "l2", "llc"});
    p.caches.l1d = read_cache(c, o.at("l1d"), o.sub("l1d"));
    p.caches.l2 = read_cache(c, o.at("l2"), o.sub("l2"));
    if (!o.at("llc").is_null()) p.caches.llc = read_cache(c, o.at("llc"), o.sub("llc"));
}

void read_quirks(const Ctx& c, const json& j, CpuProfile& p) {
    if (!j.is_array()) c.fail("/quirks", "expected a list of quirk names, got " + show(j));
    for (size_t i = 0; i < j.size(); ++i) {
        const int q = j[i].is_string()
                          ? find_name(kQuirkNames, std::size(kQuirkNames), j[i].get<std::string>())
                          : -1;
        if (q < 0)
            c.fail("/quirks/" + std::to_string(i),
                   "unknown quirk " + show(j[i]) +
                       " (known: " + known_names(kQuirkNames, std::size(kQuirkNames)) + ")");
        if (p.has_quirk(Quirk(q)))
            c.fail("/quirks/" + std::to_string(i), "quirk " + show(j[i]) + " listed twice");
        p.quirks.push_back(Quirk(q));
    }
}

void read_sources(const Ctx& c, const json& doc) {
    if (!doc.contains("sources")) return;
    const json& s = doc.at("sources");
    if (!s.is_object())
        c.fail("/sources", "expected an object mapping JSON pointers to citations, got " + show(s));
    for (const auto& [k, v] : s.items()) {
        const std::string path = "/sources/" + escape_key(k);
        if (!v.is_string()) c.fail(path, "expected a citation string, got " + show(v));
        bool ok = !k.empty() && k[0] == '/' && k.rfind("/sources", 0) != 0;
        if (ok) {
            try {
                ok = doc.contains(json::json_pointer(k));
            } catch (const json::exception&) {
                ok = false;
            }
        }
        if (!ok)
            c.fail(
                path,
                "\"" + k +
                    "\" names no value of the profile (expected a JSON pointer such as \"/pmu\")");
    }
}

/// Rules that tie sections together.
void cross_check(const Ctx& c, const CpuidMeta& m, CpuProfile& p) {
    const PmuInfo& pmu = p.pmu;
    const bool ds_feature = cpuid_bit(p, 1, 3, 21), pdcm = cpuid_bit(p, 1, 2, 15);
    // CPUID leaf 0AH (SDM Vol. 2, CPUID, Table 3-8; Vol. 3B, 18.2.1-18.2.2).
    if (pmu.version) {
        if (m.max_basic < 0x0A)
            c.fail("/pmu",
                   "architectural performance monitoring needs /cpuid/max_basic_leaf >= 0x0A");
        CpuidLeaf a;
        a.eax = pmu.version | u32(pmu.gp_counters) << 8 | u32(pmu.gp_width) << 16 |
                u32(pmu.arch_events) << 24;
        a.ebx = pmu.unavailable_events;
        if (pmu.version >= 2 && !p.has_quirk(Quirk::kV2FixedCountersNotEnumerated))
            a.edx = pmu.fixed_counters | u32(pmu.fixed_width) << 5;
        p.cpuid[{0x0A, 0}] = a;
    }
    if (p.has_quirk(Quirk::kV2FixedCountersNotEnumerated) && pmu.version < 2)
        c.fail("/quirks", "\"v2-fixed-counters-not-enumerated\" needs /pmu/version >= 2");
    // IA32_PERF_CAPABILITIES (SDM Vol. 4, Table 2-2).
    if (p.perf_capabilities && !pdcm)
        c.fail("/perf_capabilities", "a nonzero value needs CPUID.01H:ECX.PDCM (bit 15)");
    if (p.lbr_format() > 6)
        c.fail("/perf_capabilities",
               "LBR format " + std::to_string(p.lbr_format()) + " is not one pmusim knows (0-6)");
    if ((p.lbr_format() == 5) != bool(p.lbr.info_base))
        c.fail(
            "/lbr/info_base",
            p.lbr_format() == 5
                ? "LBR format 5 needs the MSR_LBR_INFO_0 address"
                : "must be null: only LBR format 5 has LBR_INFO MSRs (perf_capabilities[5:0] = " +
                      std::to_string(p.lbr_format()) + ")");
    if (p.full_width_writes() && !pmu.version)
        c.fail("/perf_capabilities", "full-width counter writes (bit 13) need /pmu");
    // Debug Store (SDM Vol. 3B, 17.4.9; seed 000 section 2).
    if ((p.ds.bts || p.ds.pebs) && !ds_feature)
        c.fail(p.ds.bts ? "/ds/bts" : "/ds/pebs", "BTS and PEBS need CPUID.01H:EDX.DS (bit 21)");
    if (p.ds.pebs) {
        if (!pmu.version) c.fail("/ds/pebs", "PEBS needs /pmu");
        if (!p.ds.pebs_gp_counters)
            c.fail("/ds/pebs_gp_counters", "PEBS needs at least one PEBS-capable counter");
        if (p.pebs_record_bytes(true) == 0)
            c.fail("/perf_capabilities", "PEBS record format " + std::to_string(p.pebs_format()) +
                                             " is not one pmusim knows (0-3)");
    } else {
        if (p.ds.pebs_gp_counters) c.fail("/ds/pebs_gp_counters", "must be 0 without PEBS");
        if (p.ds.pebs_fixed_counters) c.fail("/ds/pebs_fixed_counters", "must be 0 without PEBS");
        if (p.ds.pebs_load_latency) c.fail("/ds/pebs_load_latency", "must be false without PEBS");
    }
    const u64 gp_mask = (1ull << pmu.gp_counters) - 1,
              fixed_mask = (1ull << pmu.fixed_counters) - 1;
    if (p.ds.pebs_gp_counters & ~gp_mask)
        c.fail("/ds/pebs_gp_counters", hex(p.ds.pebs_gp_counters) +
                                           " names counters beyond /pmu/gp_counters (" +
                                           std::to_string(pmu.gp_counters) + ")");
    if (p.ds.pebs_fixed_counters & ~fixed_mask)
        c.fail("/ds/pebs_fixed_counters", hex(p.ds.pebs_fixed_counters) +
                                              " names counters beyond /pmu/fixed_counters (" +
                                              std::to_string(pmu.fixed_counters) + ")");
    // Caches against CPUID leaf 04H (SDM Vol. 2, CPUID, deterministic cache parameters).
    if (p.has_subleaves.count(4)) {
        for (const auto& [key, l] : p.cpuid) {
            if (key.first != 4) continue;
            const u32 type = l.eax & 0x1F, level = l.eax >> 5 & 7;
            if (type != 1 && type != 3) continue;  // instruction caches and "no more caches"
            const u32 line = (l.ebx & 0xFFF) + 1, parts = (l.ebx >> 12 & 0x3FF) + 1,
                      ways = (l.ebx >> 22) + 1;
            const u64 size = u64(ways) * parts * line * (u64(l.ecx) + 1);
            const std::optional<CacheLevel> mine = level == 1   ? std::optional(p.caches.l1d)
                                                   : level == 2 ? std::optional(p.caches.l2)
                                                                : p.caches.llc;
            const std::string path = level == 1   ? "/caches/l1d"
                                     : level == 2 ? "/caches/l2"
                                                  : "/caches/llc";
            if (level > 3) continue;
            const std::string leaf4 = "CPUID.04H." + std::to_string(key.second) + " (" +
                                      std::to_string(size) + " bytes, " + std::to_string(ways) +
                                      " ways, " + std::to_string(line) + "-byte lines)";
            if (!mine) c.fail(path, "is null but " + leaf4 + " describes a level-3 cache");
            if (mine->size != size || mine->ways != ways || mine->line != line)
                c.fail(path, "disagrees with " + leaf4);
        }
    }
    // TSC and core frequency against leaves 15H and 16H (SDM Vol. 2, CPUID).
    if (m.max_basic >= 0x15 && p.cpuid.count({0x15, 0})) {
        const CpuidLeaf l = p.cpuid.at({0x15, 0});
        if (l.eax && l.ebx && l.ecx && p.tsc_hz != u64(l.ecx) * l.ebx / l.eax)
            c.fail("/tsc_hz", "disagrees with CPUID.15H (" +
                                  std::to_string(u64(l.ecx) * l.ebx / l.eax) + " Hz)");
    }
    if (m.max_basic >= 0x16 && p.cpuid.count({0x16, 0})) {
        const CpuidLeaf l = p.cpuid.at({0x16, 0});
        if (l.eax & 0xFFFF && p.core_hz != u64(l.eax & 0xFFFF) * 1000000)
            c.fail("/core_hz", "disagrees with CPUID.16H:EAX (base frequency " +
                                   std::to_string(l.eax & 0xFFFF) + " MHz)");
    }
}

bool valid_name(const std::string& n) {
    return !n.empty() && n.size() <= 64 && n[0] != '-' &&
           std::all_of(n.begin(), n.end(), [](char ch) {
               return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
           });
}

/// Builds a profile from a parsed document; `expected_name` (if not empty) must be its name.
CpuProfile build(const json& doc, const Ctx& c, const std::string& expected_name) {
    const Obj top(
        c, doc, "",
        {"name", "description", "cpuid", "pmu", "perf_capabilities", "lbr", "ds", "tsc_hz",
         "core_hz", "bus_hz", "latencies", "branch_predictor", "caches", "quirks", "sources"});
    CpuProfile p;
    p.name = read_string(c, top, "name");
    if (!valid_name(p.name))
        c.fail("/name",
               "expected lower-case letters, digits and '-' (the file name without .json), got " +
                   show(top.at("name")));
    if (!expected_name.empty() && p.name != expected_name)
        c.fail("/name", "expected \"" + expected_name + "\" (the file name without .json), got " +
                            show(top.at("name")));
    p.description = read_string(c, top, "description");
    const CpuidMeta m = read_cpuid(c, top.at("cpuid"), p);
    read_pmu(c, top.at("pmu"), p);
    p.perf_capabilities = read_uint(c, top, "perf_capabilities", 0, ~0ull);
    read_lbr(c, top.at("lbr"), p);
    read_ds(c, top.at("ds"), p);
    p.tsc_hz = read_uint(c, top, "tsc_hz", 1, 100'000'000'000ull);
    p.core_hz = read_uint(c, top, "core_hz", 1, 100'000'000'000ull);
    p.bus_hz = read_uint(c, top, "bus_hz", 1, 100'000'000'000ull);
    read_latencies(c, top.at("latencies"), p);
    read_branch_predictor(c, top.at("branch_predictor"), p);
    read_caches(c, top.at("caches"), p);
    read_quirks(c, top.at("quirks"), p);
    read_sources(c, doc);
    cross_check(c, m, p);
    p.document = doc.dump();
    return p;
}

std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        std::error_code ec;
        const bool exists = fs::exists(path, ec);
        throw ProfileError(path, "",
                           exists ? "cannot read the profile file"
                                  : "cannot open the profile file (no such file)");
    }
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

std::string stem_of(const std::string& path) { return fs::path(path).stem().string(); }

}  // namespace

const char* event_count_name(EventCount c) { return kEventCountNames[unsigned(c)]; }
const char* quirk_name(Quirk q) { return kQuirkNames[unsigned(q)]; }

CpuProfile parse_profile(const std::string& text, const std::string& label, bool check_name) {
    const Ctx c{label};
    const json doc = parse_text(text, label);
    return build(doc, c, check_name ? stem_of(label) : "");
}

CpuProfile load_profile(const std::string& path) {
    CpuProfile p = parse_profile(read_file(path), path, true);
    p.source = path;
    return p;
}

const CpuProfile& generic_intel_profile() {
    static const CpuProfile p = [] {
        CpuProfile q = parse_profile(kGenericIntelJson, "generic-intel.json (built-in)", false);
        q.source = "<built-in>";
        return q;
    }();
    return p;
}

std::vector<std::string> default_profile_dirs() {
    std::vector<std::string> dirs;
    if (const char* env = std::getenv("PMUSIM_PROFILE_PATH")) {
        std::string s = env;
        size_t start = 0;
        while (start <= s.size()) {
            size_t end = s.find(':', start);
            if (end == std::string::npos) end = s.size();
            if (end > start) dirs.push_back(s.substr(start, end - start));
            start = end + 1;
        }
    }
#ifdef PMUSIM_PROFILES_SOURCE_DIR
    dirs.push_back(PMUSIM_PROFILES_SOURCE_DIR);
#endif
#ifdef PMUSIM_PROFILES_INSTALL_DIR
    dirs.push_back(PMUSIM_PROFILES_INSTALL_DIR);
#endif
    return dirs;
}

std::vector<ProfileListing> list_profiles(const std::vector<std::string>& dirs) {
    std::map<std::string, ProfileListing> found;
    for (const std::string& d : dirs) {
        std::error_code ec;
        if (!fs::is_directory(d, ec)) continue;
        std::vector<fs::path> files;
        for (const auto& e : fs::directory_iterator(d, ec))
            if (e.is_regular_file(ec) && e.path().extension() == ".json") files.push_back(e.path());
        std::sort(files.begin(), files.end());
        for (const fs::path& f : files) {
            const std::string name = f.stem().string();
            if (found.count(name)) continue;
            ProfileListing l{name, f.string(), "", ""};
            try {
                l.description = load_profile(l.path).description;
            } catch (const ProfileError& e) {
                l.error = e.what();
            }
            found.emplace(name, std::move(l));
        }
    }
    std::vector<ProfileListing> r;
    for (auto& [name, l] : found) r.push_back(std::move(l));
    return r;
}

CpuProfile load_profile_by_name(const std::string& name, const std::vector<std::string>& dirs) {
    if (name.find('/') != std::string::npos ||
        (name.size() > 5 && name.substr(name.size() - 5) == ".json"))
        return load_profile(name);
    if (valid_name(name)) {
        for (const std::string& d : dirs) {
            const fs::path f = fs::path(d) / (name + ".json");
            std::error_code ec;
            if (fs::is_regular_file(f, ec)) return load_profile(f.string());
        }
        if (name == "generic-intel") return generic_intel_profile();
    }
    std::vector<std::string> names;
    for (const ProfileListing& l : list_profiles(dirs)) names.push_back(l.name);
    if (std::find(names.begin(), names.end(), "generic-intel") == names.end())
        names.push_back("generic-intel");
    std::sort(names.begin(), names.end());
    throw ProfileError("", "",
                       "unknown CPU profile \"" + name +
                           "\" (searched: " + (dirs.empty() ? "no directories" : join(dirs)) +
                           "; available: " + join(names) + ")");
}

void apply_overrides(CpuProfile& p, const nlohmann::json& overrides) {
    const std::string label =
        (p.source.empty() || p.source == "<built-in>" ? p.name + ".json" : p.source) +
        " with overrides";
    const Ctx c{label};
    if (!overrides.is_object()) c.fail("", "overrides: expected an object, got " + show(overrides));
    json doc = json::parse(p.document);
    // Flatten both spellings into (pointer, value) assignments.
    std::vector<std::pair<std::string, json>> sets;
    auto flatten = [&](auto&& self, const std::string& base, const json& obj) -> void {
        for (const auto& [k, v] : obj.items()) {
            const std::string ptr = base + "/" + escape_key(k);
            bool into = false;
            if (v.is_object() && !v.empty()) {
                try {
                    into = doc.contains(json::json_pointer(ptr)) &&
                           doc.at(json::json_pointer(ptr)).is_object();
                } catch (const json::exception&) {
                }
            }
            if (into)
                self(self, ptr, v);
            else
                sets.emplace_back(ptr, v);
        }
    };
    for (const auto& [k, v] : overrides.items()) {
        if (!k.empty() && k[0] == '/')
            sets.emplace_back(k, v);
        else
            flatten(flatten, "", json{{k, v}});
    }
    std::vector<std::string> texts;
    for (const auto& [ptr, v] : sets) {
        json::json_pointer jp;
        try {
            jp = json::json_pointer(ptr);
        } catch (const json::exception&) {
            c.fail(ptr, "not a JSON pointer");
        }
        if (ptr == "/name") c.fail(ptr, "the profile name cannot be overridden");
        if (ptr.rfind("/sources", 0) == 0) c.fail(ptr, "sources cannot be overridden");
        bool ok = doc.contains(jp);
        if (!ok) {
            const json::json_pointer parent = jp.parent_pointer();
            ok = doc.contains(parent) && doc.at(parent).is_object();
        }
        if (!ok) c.fail(ptr, "names no value of the profile");
        doc[jp] = v;
        texts.push_back(ptr + " = " + v.dump());
    }
    CpuProfile r = build(doc, c, p.name);
    r.source = p.source;
    r.overrides = p.overrides;
    r.overrides.insert(r.overrides.end(), texts.begin(), texts.end());
    p = std::move(r);
}

}  // namespace pmusim
