// Random instruction-block generator for the differential test.
//
// Blocks are generated one instruction at a time while a pmusim Machine (the
// "oracle") executes them, so every choice can depend on the current register,
// flag and memory values: memory operands are built so their address lands in the
// data or stack area (any base/index register may be used, the displacement makes
// up the difference), string-instruction counts and pointers are kept in range,
// shift counts are known (for the count-dependent flag rules), dividing
// instructions that would raise #DE are dropped, and forward branches know
// whether they are taken (the skipped bytes are INT3). The oracle's view only
// steers generation; the finished block is then run from its initial state on
// pmusim and Unicorn and the two results are compared.
#pragma once
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "sim/machine.h"
#include "tests/diff/flag_rules.h"
#include "tests/diff/page_map.h"
#include "tests/diff/x86_encoder.h"

namespace diff {

/// One executed instruction of a block, in execution order.
struct Step {
    u64 addr = 0;
    u8 len = 0;
    u32 defined_after = kArith;  ///< arithmetic flags defined after it
    int undef_reg = -1;          ///< a register the SDM leaves undefined after it (or -1)
};

struct Block {
    int bits = 64;
    State init;                ///< initial registers, flags and memory (RIP = kCodeBase)
    std::vector<u8> code;      ///< [kCodeBase, kCodeEnd)
    u64 end_rip = 0;           ///< address of the final HLT
    std::vector<Step> path;    ///< instructions as executed while generating
    u32 final_defined = kArith;
    State gen_final;           ///< the oracle's state at the final HLT
    PageMap paging;            ///< the paged mode's paging structures (the oracle runs without)
};

/// The generator found itself in a state it cannot continue from; usually pmusim
/// disagreeing with the encoder (e.g. a different instruction length or a fault).
struct GenError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Generator {
public:
    /// `paged`: the blocks will run with paging.
    Generator(int bits, u64 seed, bool paged = false);
    /// A new block of at least `min_insns` executed instructions plus the final HLT.
    Block make_block(unsigned min_insns);
    /// The block being generated when make_block threw (for the failure report).
    const Block& partial() const { return cur_; }
    /// How many times each template was used (for the summary).
    const std::map<std::string, u64>& template_counts() const { return counts_; }
    u64 dropped_divides() const { return dropped_div_; }

    // Templates: each emits one instruction of its family, preceded by set-up
    // instructions when needed. Public so the template table can name them.
    void g_alu();
    void g_test();
    void g_unary();
    void g_mul();
    void g_imul();
    void g_div();
    void g_shift();
    void g_shxd();
    void g_bt();
    void g_bitscan();
    void g_mov();
    void g_movx();
    void g_lea();
    void g_xchg();
    void g_xadd_cmpxchg();
    void g_cmpxchg8b();
    void g_bswap();
    void g_push();
    void g_pop();
    void g_pushf_popf();
    void g_lahf_sahf();
    void g_enter_leave();
    void g_cbw();
    void g_cmov();
    void g_setcc();
    void g_flagop();
    void g_nop();
    void g_string();
    void g_jcc();
    void g_jmp();
    void g_call();
    void g_loop();

private:
    // ---- oracle access
    pmusim::Cpu& cpu() { return m_->cpu(); }
    u64 reg(int r);                   ///< current value (32-bit code: low 32 bits)
    u64 rsp() { return reg(4); }
    u64 peek(u64 addr, unsigned n);   ///< little-endian value in guest memory
    // ---- emission
    bool exec(const Enc& e, Fx fx, bool branch = false, bool may_fault = false);
    bool exec_bytes(const std::vector<u8>& b, Fx fx, bool branch, bool may_fault);
    void gen_one();
    void ensure_flags(u32 need);
    void alu(unsigned op, unsigned size, unsigned form);
    void set_reg(int r, u64 value, unsigned size);   ///< MOV r, imm (flags unaffected)
    void set_rsp_to(u64 value);                      ///< LEA rSP, [rSP + d] (flags unaffected)
    // ---- operands
    unsigned pick_size(bool byte_ok = true);
    u8 pick_asize();
    Reg pick_reg(unsigned size, bool write);
    u64 pick_target(unsigned n, bool write, unsigned align = 1);
    Mem mem_for(u64 target, u8 asize, bool rsp_base_ok = true);
    Mem random_mem(u8 asize);
    Operand rm_operand(unsigned size, bool write, unsigned mem_percent = 40, unsigned align = 1);
    void size_prefix(Enc& e, unsigned size);
    void mem_prefixes(Enc& e);
    u64 operand_value(const Operand& o, unsigned size);
    bool readable(u64 a, u64 n) const { return a >= kMemBase && a <= kMemEnd && n <= kMemEnd - a; }
    bool writable(u64 a, u64 n) const;
    bool can_push(u64 n) { return rsp() >= kStackBase + 64 + n; }
    bool can_pop(u64 n) { return rsp() + n <= protect_lo_; }
    bool make_room(u64 n);
    u64 count_value(unsigned w);
    u64 dead_distance() { return rng_.chance(20) ? 0 : rng_.below(24); }
    void load_oracle(const State& s);
    void init_state(State& s);

    int bits_;
    bool paged_;
    Rng rng_;
    std::unique_ptr<pmusim::Machine> m_;
    Block cur_;
    std::vector<u8> code_;
    std::vector<Step> path_;
    u64 pc_ = kCodeBase;
    u32 defined_ = kArith;
    u64 protect_lo_ = kStackEnd;  ///< stack bytes at and above this hold live return addresses
    unsigned depth_ = 0;        ///< CALL nesting
    std::map<std::string, u64> counts_;
    u64 dropped_div_ = 0;
    const char* template_ = "";  ///< the template being generated (for error messages)
};

}  // namespace diff
