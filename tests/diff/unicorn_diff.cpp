// Differential test of pmusim's integer core against Unicorn 2 (QEMU TCG).
//
// Random blocks of 20-60 general-purpose instructions (generator.h) run on both
// emulators from the same initial state in three modes: 64-bit code, 32-bit code,
// and 32-bit code with paging that maps the layout to other physical pages
// (page_map.h). At the final HLT the general registers, RIP, the data/stack memory
// and the flags are compared, masking the arithmetic flags the SDM leaves undefined
// (flag_rules.h), and with paging also the paging structures (accessed and dirty
// flags, SDM Vol. 3, 4.8). On a mismatch both sides are re-run one instruction at
// a time to find the first instruction after which they differ, and the block is
// printed. Known Unicorn defects are steered around (known_defects.h); any other
// mismatch fails.
//
// Environment: PMUSIM_DIFF_SEED (default 1) and PMUSIM_DIFF_INSNS (dynamic
// instructions over all modes, default 1,200,000) select a longer or other run.
#include <capstone/capstone.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <tuple>

#include "sim/machine.h"
#include "sim/paging.h"
#include "tests/diff/generator.h"
#include "tests/diff/known_defects.h"
#include "tests/diff/unicorn_cpu.h"

namespace diff {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMaxFailures = 5;
/// RFLAGS bits compared besides the defined arithmetic flags: everything up to ID.
constexpr u64 kFlagsCompared = 0x3FFFFF;

/// pmusim side: a Machine loaded with a block's code, initial state and paging.
class PmusimCpu {
public:
    PmusimCpu(int bits, bool paged) : bits_(bits) {
        pmusim::MachineConfig cfg;
        cfg.memory_bytes = paged ? kPagedRamBytes : 1ull << 20;
        m_ = std::make_unique<pmusim::Machine>(cfg);
    }
    void load(const Block& b) {
        m_->set_flat_mode(bits_ == 64 ? pmusim::CodeBits::k64 : pmusim::CodeBits::k32);
        pmusim::Cpu& c = m_->cpu();
        for (int r = 0; r < 16; ++r) c.gpr[r] = b.init.gpr[r];
        c.rip = b.init.rip;
        c.set_rflags(b.init.rflags);
        paging_ = b.paging;
        if (paging_) {
            // INT3 at the untranslated addresses, so ignoring the mapping shows.
            static const std::vector<u8> poison(kLinearPages * kPage, 0xCC);
            m_->load(0, poison.data(), poison.size());
            for (size_t k = 0; k < paging_.table_pages.size(); ++k)
                m_->load(paging_.table_pages[k], &paging_.tables[k * kPage], kPage);
            c.cr0 = paging_.cr0;
            c.cr3 = paging_.cr3;
            c.cr4 = paging_.cr4;
            if (paging_.kind == PagingKind::kPae) pmusim::load_pdptes(c, c.bus);  // as MOV CR3 does
            c.mmu.flush_tlb();
            c.update_mode();
            c.pending |= pmusim::kPendingPagingChange;
        }
        put(kCodeBase, b.code);
        put(kMemBase, b.init.mem);
    }
    pmusim::RunResult run(u64 max) { return m_->run(pmusim::RunLimits{max}); }
    pmusim::RunResult step() { return m_->step(); }
    void get_state(State& s) {
        const pmusim::Cpu& c = m_->cpu();
        for (int r = 0; r < 16; ++r) s.gpr[r] = bits_ == 64 ? c.gpr[r] : r < 8 ? u32(c.gpr[r]) : 0;
        s.rip = c.rip;
        s.rflags = u32(c.rflags());
        each_page(kMemBase, s.mem.size(), [&](u64 pa, size_t k, size_t n) { m_->peek(pa, &s.mem[k], n); });
        s.tables.resize(paging_.table_pages.size() * kPage);
        for (size_t k = 0; k < paging_.table_pages.size(); ++k)
            m_->peek(paging_.table_pages[k], &s.tables[k * kPage], kPage);
    }

private:
    /// Calls fn(physical address, offset, length) for the pieces of linear [lin, lin + n) in each page.
    template <class F>
    void each_page(u64 lin, size_t n, F fn) {
        for (size_t k = 0, len; k < n; k += len) {
            len = std::min<size_t>(n - k, kPage - (lin + k) % kPage);
            fn(paging_ ? paging_.phys(lin + k) : lin + k, k, len);
        }
    }
    void put(u64 lin, const std::vector<u8>& v) {
        each_page(lin, v.size(), [&](u64 pa, size_t k, size_t n) { m_->load(pa, &v[k], n); });
    }

    int bits_;
    PageMap paging_;
    std::unique_ptr<pmusim::Machine> m_;
};

/// Capstone 4 text for listings. The bytes are authoritative: Capstone 4 misnames a
/// few forms (e.g. 66 F3 A7, REPE CMPSW, is shown as "repe cmpsd").
class Disasm {
public:
    explicit Disasm(int bits) { cs_open(CS_ARCH_X86, bits == 64 ? CS_MODE_64 : CS_MODE_32, &h_); }
    ~Disasm() { cs_close(&h_); }
    std::string text(const std::vector<u8>& code, u64 addr) {
        cs_insn* insn = nullptr;
        const size_t off = addr - kCodeBase;
        std::string s = "(undecodable)";
        if (cs_disasm(h_, code.data() + off, code.size() - off, addr, 1, &insn) == 1) {
            s = std::string(insn->mnemonic) + " " + insn->op_str;
            cs_free(insn, 1);
        }
        return s;
    }

private:
    csh h_ = 0;
};

const char* reg_name(int bits, int r) {
    static const char* k64[16] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                                  "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};
    static const char* k32[8] = {"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi"};
    return bits == 64 ? k64[r] : k32[r];
}

std::string flag_names(u64 f) {
    static const struct { u64 bit; const char* name; } kNames[] = {
        {kCF, "CF"}, {kPF, "PF"}, {kAF, "AF"}, {kZF, "ZF"}, {kSF, "SF"}, {1u << 8, "TF"},
        {1u << 9, "IF"}, {kDF, "DF"}, {kOF, "OF"}, {3u << 12, "IOPL"}, {1u << 14, "NT"},
        {1u << 16, "RF"}, {1u << 18, "AC"}, {1u << 21, "ID"}};
    std::string s;
    for (const auto& n : kNames)
        if (f & n.bit) s += std::string(s.empty() ? "" : " ") + n.name;
    return s.empty() ? "-" : s;
}

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, f);
    std::vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

/// Differences between pmusim state `p` and Unicorn state `u` ("" if none).
/// `defined`: arithmetic flags to compare; `undef_reg`: a register not compared.
std::string compare(const State& p, const State& u, int bits, u32 defined, int undef_reg) {
    std::string out;
    for (int r = 0; r < (bits == 64 ? 16 : 8); ++r)
        if (r != undef_reg && p.gpr[r] != u.gpr[r])
            out += fmt("  %-4s pmusim=%#018llx unicorn=%#018llx\n", reg_name(bits, r),
                       (unsigned long long)p.gpr[r], (unsigned long long)u.gpr[r]);
    if (p.rip != u.rip)
        out += fmt("  rip  pmusim=%#llx unicorn=%#llx\n", (unsigned long long)p.rip, (unsigned long long)u.rip);
    const u64 mask = kFlagsCompared & ~u64(kArith & ~defined);
    if ((p.rflags ^ u.rflags) & mask)
        out += fmt("  rflags pmusim=%#llx [%s] unicorn=%#llx [%s] differ in [%s] (compared: %s)\n",
                   (unsigned long long)p.rflags, flag_names(p.rflags).c_str(), (unsigned long long)u.rflags,
                   flag_names(u.rflags).c_str(), flag_names((p.rflags ^ u.rflags) & mask).c_str(),
                   flag_names(mask & 0xFFF).c_str());
    int shown = 0;
    for (size_t i = 0; i < p.mem.size(); ++i) {
        if (p.mem[i] == u.mem[i]) continue;
        if (shown++ < 16)
            out += fmt("  mem[%#llx] pmusim=%02x unicorn=%02x\n", (unsigned long long)(kMemBase + i), p.mem[i], u.mem[i]);
    }
    if (shown > 16) out += fmt("  ... %d differing bytes in all\n", shown);
    // Paging structures (accessed and dirty flags), in 4-byte words.
    for (size_t i = 0; i + 4 <= std::min(p.tables.size(), u.tables.size()); i += 4) {
        u32 a, b;
        std::memcpy(&a, &p.tables[i], 4);
        std::memcpy(&b, &u.tables[i], 4);
        if (a != b)
            out += fmt("  paging-structure page %zu +0x%03zx pmusim=%08x unicorn=%08x (differ: %#x)\n", i / kPage,
                       i % kPage, a, b, a ^ b);
    }
    return out;
}

/// Re-runs the block one instruction at a time on both sides; returns the index of
/// the first instruction after which they differ, with the differences.
std::pair<size_t, std::string> localize(const Block& b, PmusimCpu& pm, UnicornCpu& uc) {
    pm.load(b);
    uc.recover();
    uc.load(b.code, b.init, b.paging);
    State ps, us;
    for (size_t k = 0; k < b.path.size(); ++k) {
        const Step& s = b.path[k];
        const pmusim::RunResult r = pm.step();
        if (r.reason == pmusim::StopReason::kException)
            return {k, fmt("  pmusim raised vector %d\n", r.fault ? r.fault->vector : -1)};
        // Unicorn single-steps REP string instructions one iteration at a time.
        uc_err e;
        int guard = 0;
        do e = uc.step();
        while (e == UC_ERR_OK && uc.rip() == s.addr && ++guard < 100000);
        if (e != UC_ERR_OK) return {k, fmt("  unicorn: %s\n", uc_strerror(e))};
        pm.get_state(ps);
        uc.get_state(us);
        std::string d = compare(ps, us, b.bits, s.defined_after, s.undef_reg);
        if (!d.empty()) return {k, d};
    }
    return {std::string::npos, ""};
}

/// For a mismatch that single steps do not show: the smallest k such that Unicorn
/// running at full speed from the start to the k-th instruction's address differs
/// from pmusim after k-1 instructions. Returns the index of the last instruction run.
std::pair<size_t, std::string> bisect_run_mode(const Block& b, PmusimCpu& pm, UnicornCpu& uc) {
    State ps, us;
    for (size_t k = 1; k <= b.path.size(); ++k) {
        pm.load(b);
        for (size_t i = 0; i < k; ++i) pm.step();
        pm.get_state(ps);
        uc.recover();
        uc.load(b.code, b.init, b.paging);
        const u64 until = k < b.path.size() ? b.path[k].addr : b.end_rip;
        const uc_err e = uc.run_until(until);
        uc.get_state(us);
        std::string d = e == UC_ERR_OK ? "" : fmt("  unicorn: %s\n", uc_strerror(e));
        d += compare(ps, us, b.bits, b.path[k - 1].defined_after, b.path[k - 1].undef_reg);
        if (!d.empty()) return {k - 1, d};
    }
    return {std::string::npos, ""};
}

void print_block(const Block& b, Disasm& dis, size_t mark) {
    std::printf("initial state (%d-bit code, flat segments, CPL 0):\n", b.bits);
    if (const PageMap& pm = b.paging) {
        std::printf("  %s paging: CR0 %#llx CR3 %#llx CR4 %#llx; structures at", pm.variant().c_str(),
                    (unsigned long long)pm.cr0, (unsigned long long)pm.cr3, (unsigned long long)pm.cr4);
        for (u64 t : pm.table_pages) std::printf(" %#llx", (unsigned long long)t);
        if (pm.large) std::printf("; linear 0 -> %#llx\n", (unsigned long long)pm.large);
        for (unsigned p = 0; p < kLinearPages && !pm.large; ++p)
            if (layout_page(p)) std::printf("; %#x -> %#llx", p * unsigned(kPage), (unsigned long long)pm.frame[p]);
        if (!pm.large) std::printf("\n");
    }
    for (int r = 0; r < (b.bits == 64 ? 16 : 8); ++r)
        std::printf("  %-4s %#018llx%s", reg_name(b.bits, r), (unsigned long long)b.init.gpr[r], r % 4 == 3 ? "\n" : "");
    std::printf("  rflags %#llx [%s]\n", (unsigned long long)b.init.rflags, flag_names(b.init.rflags).c_str());
    std::printf("  data/stack [%#llx, %#llx): random bytes (seeded); code at %#llx, INT3 where skipped\n",
                (unsigned long long)kMemBase, (unsigned long long)kMemEnd, (unsigned long long)kCodeBase);
    std::printf("executed instructions (flags defined after each):\n");
    for (size_t k = 0; k < b.path.size(); ++k) {
        const Step& s = b.path[k];
        std::string bytes;
        for (unsigned i = 0; i < s.len; ++i) bytes += fmt("%02x", b.code[s.addr - kCodeBase + i]);
        std::printf("%s%3zu %#06llx  %-30s %-40s [%s]\n", k == mark ? ">>" : "  ", k, (unsigned long long)s.addr,
                    bytes.c_str(), dis.text(b.code, s.addr).c_str(), flag_names(s.defined_after).c_str());
    }
    std::printf("  end: hlt at %#llx\n", (unsigned long long)b.end_rip);
}

/// Explains a block whose final states differ (`ps`: pmusim's) and prints it: the
/// first instruction after which single-stepped states differ, or, if single steps
/// agree, the first full-speed Unicorn run to an instruction boundary that differs;
/// and where a traced Unicorn run (a code hook on every instruction) leaves the path.
void diagnose(const Block& b, const State& ps, PmusimCpu& pm, UnicornCpu& uc, Disasm& dis) {
    auto [mark, detail] = localize(b, pm, uc);
    if (mark != std::string::npos) {
        std::printf("first difference after instruction %zu:\n%s", mark, detail.c_str());
    } else {
        std::printf("single-stepping both sides shows no difference\n");
        std::tie(mark, detail) = bisect_run_mode(b, pm, uc);
        if (mark != std::string::npos)
            std::printf("unicorn at full speed from the start differs after instruction %zu:\n%s", mark, detail.c_str());
    }
    std::vector<u64> addrs;
    uc.recover();
    uc.load(b.code, b.init, b.paging);
    const uc_err e = uc.trace_until(b.end_rip, addrs);
    addrs.erase(std::unique(addrs.begin(), addrs.end()), addrs.end());  // REP iterations repeat
    size_t same = 0;
    while (same < addrs.size() && same < b.path.size() && addrs[same] == b.path[same].addr) ++same;
    State us;
    uc.get_state(us);
    std::printf("traced unicorn run (%s): %zu instructions, %s after %zu; end state %s\n", uc_strerror(e),
                addrs.size(), same == b.path.size() ? "path complete" : "leaves pmusim's path", same,
                compare(ps, us, b.bits, b.final_defined, -1).empty() ? "matches pmusim" : "differs");
    if (same < addrs.size() && same < b.path.size())
        std::printf("  unicorn went to %#llx instead of %#llx\n", (unsigned long long)addrs[same],
                    (unsigned long long)b.path[same].addr);
    print_block(b, dis, mark);
}

u64 env_u64(const char* name, u64 dflt) {
    const char* v = std::getenv(name);
    return v && *v ? std::strtoull(v, nullptr, 0) : dflt;
}

/// A mode: code width, and whether the blocks run with paging (a new PageMap per block).
struct Mode {
    const char* name;
    int bits;
    bool paged;
    unsigned twelfths;  ///< share of the dynamic instructions
};
constexpr Mode kModes[] = {{"64-bit", 64, false, 6}, {"32-bit", 32, false, 4}, {"32-bit paged", 32, true, 2}};

struct ModeStats {
    u64 blocks = 0, insns = 0;
    double pm_s = 0, uc_s = 0, gen_s = 0;
    std::map<std::string, u64> paging;  ///< blocks per PageMap::variant()
};

/// Runs blocks in mode `m` until `quota` dynamic instructions; returns failures.
int run_mode(const Mode& m, u64 seed, u64 quota, int budget_failures, ModeStats& st, Generator& gen) {
    const int bits = m.bits;
    PmusimCpu pm(bits, m.paged);
    UnicornCpu uc(bits, m.paged);
    Disasm dis(bits);
    Rng lengths(seed ^ u64(bits)), maps(seed ^ 0x7A6E);
    int failures = 0;
    auto secs = [](Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); };
    while (st.insns < quota && failures < budget_failures) {
        Block b;
        auto t0 = Clock::now();
        try {
            b = gen.make_block(unsigned(lengths.range(20, 60)));
        } catch (const GenError& e) {
            std::printf("FAIL: %s block %llu: generation stopped: %s\n", m.name, (unsigned long long)st.blocks, e.what());
            print_block(gen.partial(), dis, std::string::npos);
            return failures + 1;
        }
        st.gen_s += secs(t0);
        ++st.blocks;
        if (m.paged) {
            b.paging = make_page_map(maps, maps.chance(50) ? PagingKind::k32 : PagingKind::kPae);
            ++st.paging[b.paging.variant()];
        }
        t0 = Clock::now();
        pm.load(b);
        const pmusim::RunResult r = pm.run(b.path.size() + 8);
        State ps;
        pm.get_state(ps);
        const bool halted = r.reason == pmusim::StopReason::kHalt && r.instructions == b.path.size() + 1;
        if (halted) ps.rip = r.rip - 1;  // report the HLT's own address, where Unicorn stops
        st.pm_s += secs(t0);
        t0 = Clock::now();
        uc.recover();
        uc.load(b.code, b.init, b.paging);
        const uc_err e = uc.run_until(b.end_rip);
        State us;
        uc.get_state(us);
        st.uc_s += secs(t0);
        st.insns += b.path.size();

        std::string d;
        if (!halted)
            d += fmt("  pmusim stopped by %s after %llu instructions at %#llx (expected HLT after %zu)\n",
                     pmusim::stop_reason_name(r.reason), (unsigned long long)r.instructions,
                     (unsigned long long)r.rip, b.path.size());
        if (e != UC_ERR_OK) d += fmt("  unicorn: %s\n", uc_strerror(e));
        d += compare(ps, us, bits, b.final_defined, -1);
        // pmusim running the block at full speed must agree with its own single steps.
        const std::string self = compare(ps, b.gen_final, bits, kArith, -1);
        if (d.empty() && self.empty()) continue;
        ++failures;
        std::printf("\nFAIL: %s block %llu (seed %llu)\n", m.name, (unsigned long long)st.blocks - 1,
                    (unsigned long long)seed);
        if (!self.empty()) std::printf("pmusim block run differs from pmusim single steps (left: run):\n%s", self.c_str());
        if (!d.empty()) {
            std::printf("at the final HLT (left: pmusim, right: unicorn):\n%s", d.c_str());
            diagnose(b, ps, pm, uc, dis);
        } else {
            print_block(b, dis, std::string::npos);
        }
    }
    return failures;
}

}  // namespace
}  // namespace diff

int main() {
    using namespace diff;
    const u64 seed = env_u64("PMUSIM_DIFF_SEED", 1);
    const u64 total = env_u64("PMUSIM_DIFF_INSNS", 1'200'000);
    std::printf("pmusim vs Unicorn differential test: seed %llu, %llu dynamic instructions\n",
                (unsigned long long)seed, (unsigned long long)total);
    std::printf("known Unicorn defects worked around:\n");
    for (const auto& d : kUnicornDefects) std::printf("  - %s: %s; %s\n", d.what, d.reason, d.handling);
    const auto start = Clock::now();
    int failures = 0;
    for (const Mode& m : kModes) {
        ModeStats st;
        Generator gen(m.bits, seed * 0x9E3779B97F4A7C15ull + u64(m.bits) + (m.paged ? 0x100 : 0), m.paged);
        failures += run_mode(m, seed, total * m.twelfths / 12, kMaxFailures - failures, st, gen);
        std::printf("%s: %llu blocks, %llu instructions (generate %.2fs, pmusim %.2fs, unicorn %.2fs), %llu #DE divisions dropped\n",
                    m.name, (unsigned long long)st.blocks, (unsigned long long)st.insns, st.gen_s, st.pm_s, st.uc_s,
                    (unsigned long long)gen.dropped_divides());
        for (auto it = st.paging.begin(); it != st.paging.end(); ++it)
            std::printf("%s%s %llu%s", it == st.paging.begin() ? "  blocks per paging set-up: " : ", ",
                        it->first.c_str(), (unsigned long long)it->second, std::next(it) == st.paging.end() ? "\n" : "");
        if (std::getenv("PMUSIM_DIFF_VERBOSE"))
            for (const auto& [name, n] : gen.template_counts()) std::printf("  %-22s %llu\n", name.c_str(), (unsigned long long)n);
        if (failures >= kMaxFailures) break;
    }
    std::printf("%s after %.1fs\n", failures ? "FAILED" : "passed",
                std::chrono::duration<double>(Clock::now() - start).count());
    return failures ? 1 : 0;
}
