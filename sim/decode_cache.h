// The decoded-instruction cache: blocks of pre-bound Insn records.
#pragma once
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "isa/decoder.h"
#include "isa/insn.h"
#include "sim/cpu.h"

namespace pmusim {

/// A straight run of decoded instructions, ending at the first control transfer
/// (or state-changing instruction), at a page boundary, at a stop address, or
/// after kMaxInsns instructions.
struct Block {
    static constexpr unsigned kMaxInsns = 64;
    u64 rip = 0;          ///< offset in CS of the first instruction
    u64 lin = 0;          ///< linear address of the first instruction
    u8 mode = 0;          ///< Cpu::mode_key() it was decoded for
    bool stop_here = false;  ///< the block starts at a run-loop stop address
    bool chainable = false;  ///< ends in a near branch or falls through: mode and CS stay the same
    u32 count = 0;        ///< instructions
    // Successor links (block chaining), valid while link_gen equals the cache's generation.
    u64 link_gen = ~0ull;
    u64 link_rip[2] = {~0ull, ~0ull};
    Block* link[2] = {nullptr, nullptr};
    u64 pfn[2] = {~0ull, ~0ull};  ///< physical pages its bytes come from
    std::unique_ptr<Insn[]> insns;
};

/// Caches decoded blocks keyed by (linear address, RIP, decoder mode).
///
/// Lookup is a direct-mapped table in front of a hash map. A block is dropped
/// when guest memory holding its bytes is written (the MMU reports writes to
/// pages marked as code; the check is per page), when the decoder mode differs,
/// or on flush(). Dropped blocks stay allocated until collect_garbage() so the
/// block being executed remains valid while its own code is overwritten.
class DecodeCache {
public:
    explicit DecodeCache(Cpu& cpu);

    /// The block starting at cpu.rip in the current mode; decodes it on a miss.
    /// Throws GuestFault if the first instruction cannot be fetched.
    Block* lookup();
    /// The block to run after `prev` (nullptr if unknown): follows prev's successor
    /// links when they are still valid, else lookup() and records the link.
    Block* next(Block* prev) {
        if (prev && prev->link_gen == gen_) {
            if (prev->link_rip[0] == cpu_.rip) return prev->link[0];
            if (prev->link_rip[1] == cpu_.rip) return prev->link[1];
        }
        return link_from(prev, lookup());
    }

    /// Drops the blocks whose bytes lie in physical page `pfn`.
    void invalidate_page(u64 pfn);
    /// Drops every block.
    void flush();
    /// Frees dropped blocks; call only between blocks.
    void collect_garbage() { graveyard_.clear(); }

    /// RIPs at which blocks must start (run-loop stop addresses). Flushes the cache.
    void set_stop_addresses(std::unordered_set<u64> rips);

    struct Stats {
        u64 lookups = 0, table_misses = 0, blocks_decoded = 0, insns_decoded = 0, invalidations = 0;
    };
    const Stats& stats() const { return stats_; }

private:
    struct Key {
        u64 lin, rip;
        u8 mode;
        bool operator==(const Key& o) const { return lin == o.lin && rip == o.rip && mode == o.mode; }
    };
    struct KeyHash {
        size_t operator()(const Key& k) const { return std::hash<u64>()(k.lin * 31 + k.rip * 7 + k.mode); }
    };
    struct Slot {
        u64 lin = ~0ull, rip = 0;
        u8 mode = 0;
        Block* block = nullptr;
    };
    static constexpr size_t kSlots = 1u << 14;
    static size_t slot_of(u64 lin) { return (lin ^ (lin >> 14)) & (kSlots - 1); }

    std::unique_ptr<Block> build(u64 rip, u64 lin, u8 mode);
    Block* link_from(Block* prev, Block* b);
    void drop(Block* b);

    Cpu& cpu_;
    Decoder decoder_;
    std::vector<Slot> table_;
    std::unordered_map<Key, std::unique_ptr<Block>, KeyHash> blocks_;
    std::unordered_map<u64, std::vector<Block*>> by_page_;
    std::vector<std::unique_ptr<Block>> graveyard_;
    std::unordered_set<u64> stop_rips_;
    std::vector<Insn> scratch_;
    u64 gen_ = 0;  ///< bumped whenever a block is dropped: invalidates every successor link
    Stats stats_;
};

}  // namespace pmusim
