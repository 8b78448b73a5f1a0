#include "sim/decode_cache.h"

#include <algorithm>

#include "isa/bind.h"
#include "sim/fault.h"

namespace pmusim {

namespace {
bool is_near_branch(Op op) {
    switch (op) {
        case Op::JMP: case Op::CALL: case Op::RET: case Op::JO: case Op::JNO: case Op::JB: case Op::JAE:
        case Op::JE: case Op::JNE: case Op::JBE: case Op::JA: case Op::JS: case Op::JNS: case Op::JP:
        case Op::JNP: case Op::JL: case Op::JGE: case Op::JLE: case Op::JG: case Op::JCXZ: case Op::JECXZ:
        case Op::JRCXZ: case Op::LOOP: case Op::LOOPE: case Op::LOOPNE:
            return true;
        default:
            return false;
    }
}
}  // namespace

DecodeCache::DecodeCache(Cpu& cpu) : cpu_(cpu), table_(kSlots) {
    cpu_.mmu.on_code_write = [this](u64 pfn) { invalidate_page(pfn); };
    scratch_.reserve(Block::kMaxInsns);
}

Block* DecodeCache::lookup() {
    const u64 rip = cpu_.rip;
    const u64 lin = (cpu_.seg_base[CS] + rip) & cpu_.lin_mask;
    const u8 mode = cpu_.mode_key();
    ++stats_.lookups;
    Slot& s = table_[slot_of(lin)];
    if (s.lin == lin && s.rip == rip && s.mode == mode) return s.block;
    ++stats_.table_misses;
    const Key key{lin, rip, mode};
    auto it = blocks_.find(key);
    if (it == blocks_.end()) {
        std::unique_ptr<Block> b = build(rip, lin, mode);
        for (u64 pfn : b->pfn)
            if (pfn != ~0ull) by_page_[pfn].push_back(b.get());
        it = blocks_.emplace(key, std::move(b)).first;
    }
    s = Slot{lin, rip, mode, it->second.get()};
    return s.block;
}

std::unique_ptr<Block> DecodeCache::build(u64 rip, u64 lin, u8 mode) {
    auto b = std::make_unique<Block>();
    b->rip = rip;
    b->lin = lin;
    b->mode = mode;
    b->stop_here = stop_rips_.count(rip) != 0;
    scratch_.clear();
    const CodeBits bits = cpu_.code_bits;
    const u64 ip_mask = bits == CodeBits::k64 ? ~0ull : bits == CodeBits::k32 ? 0xFFFFFFFFull : 0xFFFF;
    u64 cur = rip;
    DecodedInsn d;
    for (;;) {
        u8 bytes[15];
        u64 pfns[2];
        const u64 at = (cpu_.seg_base[CS] + cur) & cpu_.lin_mask;
        const unsigned n = cpu_.mmu.fetch(at, bytes, 15, pfns);
        const DecodeStatus st = n ? decoder_.decode(bytes, n, cur, bits, d) : DecodeStatus::kTruncated;
        if (st == DecodeStatus::kTruncated) {
            // The instruction runs into memory that cannot be fetched: the fetch
            // fault belongs to this instruction if it is the block's first.
            if (scratch_.empty()) throw cpu_.mmu.fetch_fault().value_or(GuestFault{vec::GP, true, 0, 0});
            break;
        }
        Insn in;
        if (st == DecodeStatus::kInvalid) {
            d = DecodedInsn{};
            d.address = cur;
            d.length = 1;
            d.mode = bits;
            bind(d, in, cpu_.missing);
            in.fn = h_ud;
            in.len = 0;  // an invalid opcode has no length; the #UD points at it
            in.next = cur;
        } else {
            bind(d, in, cpu_.missing);
            in.next &= ip_mask;
        }
        for (u64 pfn : pfns) {
            if (pfn == ~0ull) continue;
            if (b->pfn[0] == ~0ull || b->pfn[0] == pfn) b->pfn[0] = pfn;
            else b->pfn[1] = pfn;
            cpu_.mmu.mark_code_page(pfn);
        }
        scratch_.push_back(in);
        const bool crosses = d.length && ((at & kPageMask) + d.length > kPageSize);
        if (in.ends_block || st == DecodeStatus::kInvalid || crosses ||
            scratch_.size() >= Block::kMaxInsns || ((at + d.length) & ~kPageMask) != (lin & ~kPageMask) ||
            stop_rips_.count(in.next))
            break;
        cur = in.next;
    }
    // The last instruction of a block that does not end in a control transfer
    // falls through; the run loop sets RIP from Insn::next for it.
    b->count = u32(scratch_.size());
    // Near branches and fall-through keep mode and CS, so successors can be chained.
    const Insn& last = scratch_.back();
    b->chainable = !last.ends_block || is_near_branch(last.op);
    b->insns.reset(new Insn[b->count]);
    std::copy(scratch_.begin(), scratch_.end(), b->insns.get());
    ++stats_.blocks_decoded;
    stats_.insns_decoded += b->count;
    return b;
}

Block* DecodeCache::link_from(Block* prev, Block* b) {
    if (!prev || !prev->chainable) return b;
    if (prev->link_gen != gen_) {
        prev->link_gen = gen_;
        prev->link_rip[0] = prev->link_rip[1] = ~0ull;
    }
    const unsigned k = prev->link_rip[0] == ~0ull ? 0 : 1;
    prev->link_rip[k] = cpu_.rip;
    prev->link[k] = b;
    return b;
}

void DecodeCache::drop(Block* b) {
    ++gen_;
    Slot& s = table_[slot_of(b->lin)];
    if (s.block == b) s = Slot{};
    for (u64 pfn : b->pfn) {
        if (pfn == ~0ull) continue;
        auto pit = by_page_.find(pfn);
        if (pit == by_page_.end()) continue;
        auto& v = pit->second;
        v.erase(std::remove(v.begin(), v.end(), b), v.end());
        if (v.empty()) by_page_.erase(pit);
    }
    auto it = blocks_.find(Key{b->lin, b->rip, b->mode});
    if (it != blocks_.end()) {
        graveyard_.push_back(std::move(it->second));
        blocks_.erase(it);
    }
}

void DecodeCache::invalidate_page(u64 pfn) {
    auto it = by_page_.find(pfn);
    if (it == by_page_.end()) return;
    const std::vector<Block*> victims = it->second;
    for (Block* b : victims) drop(b);
    ++stats_.invalidations;
    cpu_.pending |= kPendingCodeWrite;
}

void DecodeCache::flush() {
    ++gen_;
    for (auto& [k, b] : blocks_) graveyard_.push_back(std::move(b));
    blocks_.clear();
    by_page_.clear();
    std::fill(table_.begin(), table_.end(), Slot{});
    cpu_.pending |= kPendingCodeWrite;
}

void DecodeCache::set_stop_addresses(std::unordered_set<u64> rips) {
    stop_rips_ = std::move(rips);
    flush();
}

}  // namespace pmusim
