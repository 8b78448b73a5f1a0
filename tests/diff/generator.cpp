// Generator infrastructure: initial state, the oracle (a pmusim Machine stepped one
// instruction at a time), emission, and operand selection. The instruction
// templates are in gen_templates.cpp.
#include "tests/diff/generator.h"

#include <algorithm>
#include <cstdio>

#include "sim/fault.h"

namespace diff {

using pmusim::CodeBits;
using pmusim::Machine;
using pmusim::MachineConfig;
using pmusim::RunResult;
using pmusim::StopReason;

namespace {

constexpr u8 kHlt = 0xF4, kInt3 = 0xCC;

std::string hex_bytes(const std::vector<u8>& b) {
    std::string s;
    char buf[4];
    for (u8 x : b) {
        std::snprintf(buf, sizeof buf, "%02x ", x);
        s += buf;
    }
    return s;
}

struct Template {
    void (Generator::*fn)();
    unsigned weight;
    const char* name;
};

// Relative frequencies of the instruction families.
const Template kTemplates[] = {
    {&Generator::g_alu, 14, "alu"},         {&Generator::g_test, 3, "test"},
    {&Generator::g_unary, 5, "not/neg/inc/dec"}, {&Generator::g_mul, 3, "mul/imul1"},
    {&Generator::g_imul, 3, "imul2/3"},      {&Generator::g_div, 3, "div/idiv"},
    {&Generator::g_shift, 8, "shift/rotate"}, {&Generator::g_shxd, 3, "shld/shrd"},
    {&Generator::g_bt, 4, "bt*"},            {&Generator::g_bitscan, 3, "bsf/bsr/tzcnt/lzcnt"},
    {&Generator::g_mov, 10, "mov"},          {&Generator::g_movx, 4, "movzx/movsx/movsxd"},
    {&Generator::g_lea, 4, "lea"},           {&Generator::g_xchg, 3, "xchg"},
    {&Generator::g_xadd_cmpxchg, 3, "xadd/cmpxchg"}, {&Generator::g_cmpxchg8b, 1, "cmpxchg8b/16b"},
    {&Generator::g_bswap, 1, "bswap"},       {&Generator::g_push, 4, "push"},
    {&Generator::g_pop, 3, "pop"},           {&Generator::g_pushf_popf, 2, "pushf/popf"},
    {&Generator::g_lahf_sahf, 1, "lahf/sahf"}, {&Generator::g_enter_leave, 2, "enter/leave"},
    {&Generator::g_cbw, 2, "cbw..cqo"},      {&Generator::g_cmov, 4, "cmovcc"},
    {&Generator::g_setcc, 3, "setcc"},       {&Generator::g_flagop, 2, "clc/stc/cmc/cld/std"},
    {&Generator::g_nop, 1, "nop"},           {&Generator::g_string, 5, "string"},
    {&Generator::g_jcc, 5, "jcc"},           {&Generator::g_jmp, 2, "jmp"},
    {&Generator::g_call, 2, "call/ret"},     {&Generator::g_loop, 2, "loop/jrcxz"},
};

}  // namespace

// ---- set-up ------------------------------------------------------------------

Generator::Generator(int bits, u64 seed, bool paged) : bits_(bits), paged_(paged), rng_(seed) {
    MachineConfig cfg;
    cfg.memory_bytes = 1ull << 20;
    m_ = std::make_unique<Machine>(cfg);
}

void Generator::init_state(State& s) {
    for (int r = 0; r < 16; ++r) {
        u64 v;
        switch (rng_.below(10)) {
            case 0: case 1: case 2: v = kDataBase + rng_.below(kDataEnd - kDataBase); break;  // pointers
            case 3: v = rng_.below(32); break;
            case 4: v = kStackBase + rng_.below(kStackEnd - kStackBase); break;
            default: v = rng_.value(8); break;
        }
        s.gpr[r] = bits_ == 64 ? v : (r < 8 ? u32(v) : 0);
    }
    s.gpr[kRSP] = u64(i64(kStackStart) + 8 * rng_.range(-32, 32) + (bits_ == 32 && rng_.chance(20) ? 4 : 0));
    s.rip = kCodeBase;
    s.rflags = 2 | (rng_.next() & kArith) | (rng_.chance(25) ? kDF : 0);
    for (size_t i = 0; i < s.mem.size(); i += 8) {
        const u64 v = rng_.next();
        for (size_t k = 0; k < 8 && i + k < s.mem.size(); ++k) s.mem[i + k] = u8(v >> (8 * k));
    }
    // A copy of the first 256 data bytes at +0x800 (REPE CMPS finds equal runs), and a zero run.
    if (rng_.chance(60)) std::copy_n(s.mem.begin(), 256, s.mem.begin() + 0x800);
    if (rng_.chance(40)) std::fill_n(s.mem.begin() + rng_.below(0x1F00), 64, 0);
}

void Generator::load_oracle(const State& s) {
    m_->set_flat_mode(bits_ == 64 ? CodeBits::k64 : CodeBits::k32);
    pmusim::Cpu& c = cpu();
    for (int r = 0; r < 16; ++r) c.gpr[r] = s.gpr[r];
    c.rip = s.rip;
    c.set_rflags(s.rflags);
    m_->load(kMemBase, s.mem.data(), s.mem.size());
    code_.assign(kCodeEnd - kCodeBase, kInt3);
    m_->load(kCodeBase, code_.data(), code_.size());
}

Block Generator::make_block(unsigned min_insns) {
    Block& b = cur_;
    b = Block{};
    b.bits = bits_;
    init_state(b.init);
    load_oracle(b.init);
    // On a GenError, cur_ shows the instructions up to the failing one.
    struct Publish {
        Generator& g;
        ~Publish() {
            g.cur_.code = g.code_;
            g.cur_.path = g.path_;
            g.cur_.end_rip = g.pc_;
        }
    } publish{*this};
    pc_ = kCodeBase;
    defined_ = kArith;
    path_.clear();
    protect_lo_ = kStackEnd;
    depth_ = 0;
    while (path_.size() < min_insns && pc_ < kCodeEnd - 2048) gen_one();
    code_[pc_ - kCodeBase] = kHlt;
    b.code = code_;
    b.end_rip = pc_;
    b.path = path_;
    b.final_defined = defined_;
    for (int r = 0; r < 16; ++r) b.gen_final.gpr[r] = reg(r);
    b.gen_final.rip = pc_;
    b.gen_final.rflags = cpu().rflags();
    m_->peek(kMemBase, b.gen_final.mem.data(), b.gen_final.mem.size());
    return b;
}

void Generator::gen_one() {
    static const unsigned total = [] {
        unsigned t = 0;
        for (const Template& x : kTemplates) t += x.weight;
        return t;
    }();
    unsigned k = unsigned(rng_.below(total));
    for (const Template& x : kTemplates) {
        if (k < x.weight) {
            ++counts_[x.name];
            template_ = x.name;
            (this->*x.fn)();
            return;
        }
        k -= x.weight;
    }
}

// ---- oracle access and emission ----------------------------------------------

u64 Generator::reg(int r) {
    const u64 v = cpu().gpr[r];
    return bits_ == 64 ? v : u32(v);
}

u64 Generator::peek(u64 addr, unsigned n) {
    u64 v = 0;
    m_->peek(addr, &v, n);
    return v;
}

bool Generator::exec(const Enc& e, Fx fx, bool branch, bool may_fault) {
    std::vector<u8> b;
    try {
        // Legacy prefixes may come in any order (SDM Vol. 2, 2.1.1): shuffle them now and then.
        const size_t n = e.prefixes.size() - (e.mandatory_prefix ? 1 : 0);
        if (n > 1 && rng_.chance(50)) {
            Enc shuffled = e;
            for (size_t i = n - 1; i > 0; --i) std::swap(shuffled.prefixes[i], shuffled.prefixes[rng_.below(i + 1)]);
            b = shuffled.encode(pc_, bits_);
        } else {
            b = e.encode(pc_, bits_);
        }
    } catch (const std::logic_error& x) {
        throw GenError(std::string("encoder: ") + x.what() + " in template " + template_);
    }
    return exec_bytes(b, fx, branch, may_fault);
}

/// Places `b` at pc_ (followed by HLT, which ends pmusim's decoded block so only
/// this instruction is decoded) and single-steps the oracle over it.
bool Generator::exec_bytes(const std::vector<u8>& b, Fx fx, bool branch, bool may_fault) {
    if (pc_ + b.size() + 1 > kCodeEnd) throw GenError("code area full");
    std::vector<u8> buf(b);
    buf.push_back(kHlt);
    m_->load(pc_, buf.data(), buf.size());
    pmusim::Cpu& c = cpu();
    if (c.rip != pc_) throw GenError("oracle RIP out of step");
    const RunResult r = m_->step();
    char msg[160];
    if (r.reason == StopReason::kException) {
        const int v = r.fault ? r.fault->vector : -1;
        if (may_fault && v == pmusim::vec::DE) {
            c.rip = pc_;  // a faulting DIV/IDIV changes nothing: drop it
            return false;
        }
        std::snprintf(msg, sizeof msg, "pmusim raised vector %d at %#llx: ", v, (unsigned long long)pc_);
        throw GenError(msg + hex_bytes(b));
    }
    const u64 next = pc_ + b.size();
    if (r.instructions != 1 || (!branch && c.rip != next)) {
        std::snprintf(msg, sizeof msg, "pmusim ran %llu insns and stopped at %#llx (%s); encoder says next=%#llx: ",
                      (unsigned long long)r.instructions, (unsigned long long)c.rip,
                      pmusim::stop_reason_name(r.reason), (unsigned long long)next);
        throw GenError(msg + hex_bytes(b));
    }
    std::copy(b.begin(), b.end(), code_.begin() + i64(pc_ - kCodeBase));
    defined_ = fx.apply(defined_);
    path_.push_back(Step{pc_, u8(b.size()), defined_, fx.undef_reg});
    pc_ = branch ? c.rip : next;
    return true;
}

/// Makes the flags in `need` defined, with an instruction that defines all six.
void Generator::ensure_flags(u32 need) {
    if ((defined_ & need) == need) return;
    static const unsigned kDefining[] = {0, 5, 7};  // ADD SUB CMP (SDM Vol. 2A ADD/CMP, 2B SUB)
    alu(rng_.pick(kDefining), pick_size(), unsigned(rng_.below(5)));
}

/// MOV r, imm of `size` bytes (flags unaffected). 4-byte moves zero-extend.
void Generator::set_reg(int r, u64 v, unsigned size) {
    Enc e;
    e.has_opreg = true;
    e.opreg = Reg{u8(r), size == 1, false};
    if (size == 1) {
        e.opcode = {0xB0};
        e.add_imm(v, 1);
    } else if (size == 2) {
        e.prefixes = {0x66};
        e.opcode = {0xB8};
        e.add_imm(v, 2);
    } else if (size == 4) {
        e.opcode = {0xB8};
        e.add_imm(v, 4);
    } else if (i64(v) == i64(i32(v))) {
        e = Enc{};  // C7 /0 id: sign-extended imm32
        e.rex_w = true;
        e.opcode = {0xC7};
        e.has_modrm = true;
        e.rm.reg = Reg{u8(r)};
        e.add_imm(v, 4);
    } else {
        e.rex_w = true;  // MOVABS r64, imm64
        e.opcode = {0xB8};
        e.add_imm(v, 8);
    }
    exec(e, Fx::none());
}

/// LEA rSP, [rSP + d]: moves the stack pointer without touching the flags.
void Generator::set_rsp_to(u64 value) {
    const i64 d = bits_ == 64 ? i64(value - rsp()) : i64(i32(u32(value - rsp())));
    Enc e;
    e.rex_w = bits_ == 64;
    e.opcode = {0x8D};
    e.has_modrm = true;
    e.reg = Reg{kRSP};
    e.rm.is_mem = true;
    e.rm.mem = Mem{};
    e.rm.mem.asize = u8(bits_ / 8);
    e.rm.mem.base = kRSP;
    e.rm.mem.disp = d;
    e.rm.mem.disp_bytes = fits8(d) ? 1 : 4;
    exec(e, Fx::none());
}

bool Generator::make_room(u64 n) {
    if (can_push(n)) return true;
    // Release stack space up to the live return addresses.
    const u64 new_sp = std::min<u64>(protect_lo_, kStackStart + 0x200) & ~u64(7);
    if (new_sp <= rsp() || new_sp < kStackBase + 64 + n) return false;
    set_rsp_to(new_sp);
    return can_push(n);
}

// ---- operands ----------------------------------------------------------------

unsigned Generator::pick_size(bool byte_ok) {
    for (;;) {
        const u64 k = rng_.below(100);
        const unsigned s = k < 20 ? 1 : k < 35 ? 2 : k < 70 ? 4 : 8;
        if ((s == 1 && !byte_ok) || (s == 8 && bits_ != 64)) continue;
        return s;
    }
}

u8 Generator::pick_asize() {
    const bool alt = rng_.chance(20);  // 67 prefix
    if (bits_ == 64) return alt ? 4 : 8;
    return alt ? 2 : 4;
}

/// A register operand; `write`: never rSP (nor SPL): the stack pointer is only
/// moved by stack instructions.
Reg Generator::pick_reg(unsigned size, bool write) {
    const unsigned n = bits_ == 64 ? 16 : 8;
    for (;;) {
        Reg r{u8(rng_.below(n)), size == 1, false};
        if (size == 1 && r.num >= 4 && r.num <= 7) r.high8 = bits_ == 32 || rng_.chance(50);
        if (write && r.num == kRSP && !(r.byte && r.high8)) continue;
        return r;
    }
}

bool Generator::writable(u64 a, u64 n) const { return a >= kMemBase && a <= protect_lo_ && n <= protect_lo_ - a; }

/// An address for an n-byte access: a hot spot at the start of the data area (so
/// loads see earlier stores), near the stack pointer, across the data page
/// boundary, or anywhere in the data area.
u64 Generator::pick_target(unsigned n, bool write, unsigned align) {
    for (int tries = 0; tries < 32; ++tries) {
        u64 a;
        const u64 k = rng_.below(10);
        if (k < 2) a = rsp() + u64(rng_.range(-48, 48));
        else if (k < 6) a = kDataBase + rng_.below(256);
        else if (k < 7) a = 0x5000 - rng_.below(n + 1);
        else a = kDataBase + rng_.below(kDataEnd - kDataBase);
        a &= ~u64(align - 1);
        if (write ? writable(a, n) : readable(a, n)) return a;
    }
    return kDataBase + 0x100;
}

/// A memory operand of address size `asize` whose effective address is `t`, built
/// from the current register values (SDM Vol. 2, 2.1.5).
Mem Generator::mem_for(u64 t, u8 asize, bool rsp_base_ok) {
    Mem m;
    m.asize = asize;
    m.addr = t;
    if (asize == 2) {
        // Table 2-1: [BX+SI] [BX+DI] [BP+SI] [BP+DI] [SI] [DI] [BP] [BX], or [disp16].
        static const int kB[8] = {kRBX, kRBX, kRBP, kRBP, kRSI, kRDI, kRBP, kRBX};
        static const int kI[8] = {kRSI, kRDI, kRSI, kRDI, -1, -1, -1, -1};
        const int rm = int(rng_.below(9));
        if (rm == 8) {
            m.rm16 = Mem::kAbs16;
            m.disp = i64(t & 0xFFFF);
            return m;
        }
        const u64 sum = reg(kB[rm]) + (kI[rm] >= 0 ? reg(kI[rm]) : 0);
        const u64 d = (t - sum) & 0xFFFF;
        m.rm16 = rm;
        m.disp = sext(d, 2);
        m.disp_bytes = (d == 0 && rm != 6 && rng_.chance(60)) ? 0 : (fits8(m.disp) && rng_.chance(80)) ? 1 : 2;
        return m;
    }
    const int nregs = bits_ == 64 ? 16 : 8;
    for (int tries = 0; tries < 12; ++tries) {
        const u64 form = rng_.below(10);
        Mem c;
        c.asize = asize;
        c.addr = t;
        if (form == 0) {  // [disp32]
            if (asize == 8 && t > 0x7FFFFFFF) continue;
            c.disp = i64(i32(u32(t)));
            c.disp_bytes = 4;
            return c;
        }
        if (form == 1) {
            if (bits_ != 64) continue;
            c.rip = true;  // [rip + disp32]
            c.disp = i64(t);
            c.disp_bytes = 4;
            return c;
        }
        c.base = form == 2 ? -1 : int(rng_.below(nregs));
        c.index = form >= 2 && form <= 5 ? int(rng_.below(nregs)) : -1;
        if (c.index == kRSP) continue;
        if (c.base == kRSP && !rsp_base_ok) continue;
        c.scale = c.index >= 0 ? u8(rng_.below(4)) : 0;
        const u64 sum = (c.base >= 0 ? reg(c.base) : 0) + (c.index >= 0 ? reg(c.index) << c.scale : 0);
        const i64 d = asize == 8 ? i64(t - sum) : i64(i32(u32(t - sum)));
        if (d != i64(i32(d))) continue;
        c.disp = d;
        if (c.base < 0) c.disp_bytes = 4;
        else if (d == 0 && (c.base & 7) != 5 && rng_.chance(50)) c.disp_bytes = 0;
        else if (fits8(d) && rng_.chance(85)) c.disp_bytes = 1;
        else c.disp_bytes = 4;
        return c;
    }
    m.disp = i64(t);  // every target is below 2 GiB: [disp32] always works
    m.disp_bytes = 4;
    return m;
}

/// A memory operand that is never accessed (LEA, NOP): any registers, any displacement.
Mem Generator::random_mem(u8 asize) {
    Mem m;
    m.asize = asize;
    if (asize == 2) {
        m.rm16 = int(rng_.below(9));
        if (m.rm16 == 8) {
            m.rm16 = Mem::kAbs16;
            m.disp = i64(rng_.next() & 0xFFFF);
            return m;
        }
        m.disp_bytes = u8(rng_.below(3));
        if (m.rm16 == 6 && m.disp_bytes == 0) m.disp_bytes = 1;
        m.disp = m.disp_bytes ? sext(rng_.next(), m.disp_bytes) : 0;
        return m;
    }
    const int nregs = bits_ == 64 ? 16 : 8;
    const u64 form = rng_.below(8);
    if (form == 0 || (form == 1 && bits_ != 64)) {
        m.disp = sext(rng_.next(), 4);
        m.disp_bytes = 4;
        return m;
    }
    if (form == 1) {
        m.rip = true;
        m.disp = i64(rng_.below(0x10000));
        m.disp_bytes = 4;
        return m;
    }
    m.base = form == 2 ? -1 : int(rng_.below(nregs));
    m.index = form >= 2 && form <= 5 ? int(rng_.below(nregs)) : -1;
    if (m.index == kRSP) m.index = -1;
    m.scale = m.index >= 0 ? u8(rng_.below(4)) : 0;
    m.disp_bytes = m.base < 0 ? 4 : u8(rng_.pick({0, 1, 4}));
    if (m.base >= 0 && (m.base & 7) == 5 && m.disp_bytes == 0) m.disp_bytes = 1;
    m.disp = m.disp_bytes ? sext(rng_.next(), m.disp_bytes) : 0;
    return m;
}

Operand Generator::rm_operand(unsigned size, bool write, unsigned mem_percent, unsigned align) {
    Operand o;
    if (rng_.chance(mem_percent)) {
        o.is_mem = true;
        const u8 as = pick_asize();
        o.mem = mem_for(pick_target(size, write, align), as);
    } else {
        o.reg = pick_reg(size, write);
    }
    return o;
}

void Generator::size_prefix(Enc& e, unsigned size) {
    if (size == 2) e.prefixes.push_back(0x66);
    if (size == 8) e.rex_w = true;
}

/// 67 for a memory operand of the non-default address size, and now and then a
/// segment override: all segments are flat (in 64-bit code ES CS SS DS overrides are
/// ignored and FS/GS have base 0). CS is not used in 32-bit code (not writable).
void Generator::mem_prefixes(Enc& e) {
    if (!e.has_modrm || !e.rm.is_mem) return;
    if (e.rm.mem.asize != (bits_ == 64 ? 8 : 4)) e.prefixes.push_back(0x67);
    if (rng_.chance(5)) {
        if (bits_ == 64) e.prefixes.push_back(rng_.pick({u8(0x26), u8(0x2E), u8(0x36), u8(0x3E), u8(0x64), u8(0x65)}));
        else e.prefixes.push_back(rng_.pick({u8(0x26), u8(0x36), u8(0x3E)}));
    }
}

/// The current value of an operand built by rm_operand / pick_reg.
u64 Generator::operand_value(const Operand& o, unsigned size) {
    if (o.is_mem) return peek(o.mem.addr, size);
    if (o.reg.byte && o.reg.high8) return (reg(o.reg.num - 4) >> 8) & 0xFF;
    return reg(o.reg.num) & mask_of(size);
}

u64 Generator::count_value(unsigned w) {
    static const unsigned kEdges[] = {0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65};
    switch (rng_.below(4)) {
        case 0: return rng_.below(w + 2);
        case 1: return 1;
        case 2: return rng_.pick(kEdges);
        default: return rng_.below(256);
    }
}

}  // namespace diff
