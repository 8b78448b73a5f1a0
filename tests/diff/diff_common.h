// Shared pieces of the pmusim-vs-Unicorn differential test: guest layout, the
// architectural state both sides are compared on, and a small deterministic RNG.
#pragma once
#include <cstdint>
#include <vector>

#include "isa/flags.h"
#include "sim/types.h"

namespace diff {

using pmusim::i32;
using pmusim::i64;
using pmusim::u16;
using pmusim::u32;
using pmusim::u64;
using pmusim::u8;

/// Guest layout (identical on both sides, flat segments with base 0). Everything
/// sits below 64 KiB so 16-bit addressing can reach all of it.
constexpr u64 kCodeBase = 0x1000, kCodeEnd = 0x3000;    ///< generated code (+ INT3 filler)
constexpr u64 kDataBase = 0x4000, kDataEnd = 0x6000;    ///< random data, two pages
constexpr u64 kStackBase = 0x6000, kStackEnd = 0x7000;  ///< the stack page
constexpr u64 kMemBase = kDataBase, kMemEnd = kStackEnd;  ///< data + stack: compared bytes
constexpr u64 kStackStart = 0x6800;                      ///< initial rSP (+/- a little)

/// The six arithmetic flags (RFLAGS bits, SDM Vol. 1, 3.4.3.1).
constexpr u32 kCF = u32(pmusim::kCF), kPF = u32(pmusim::kPF), kAF = u32(pmusim::kAF),
              kZF = u32(pmusim::kZF), kSF = u32(pmusim::kSF), kOF = u32(pmusim::kOF);
constexpr u32 kArith = kCF | kPF | kAF | kZF | kSF | kOF;
constexpr u32 kDF = u32(pmusim::kDF);

/// General registers in encoding order (SDM Vol. 2, 2.1.5).
enum : int { kRAX, kRCX, kRDX, kRBX, kRSP, kRBP, kRSI, kRDI };

inline u64 mask_of(unsigned bytes) { return bytes >= 8 ? ~0ull : (1ull << (bytes * 8)) - 1; }
inline i64 sext(u64 v, unsigned bytes) {
    const unsigned sh = 64 - bytes * 8;
    return i64(v << sh) >> sh;
}
inline bool fits8(i64 v) { return v >= -128 && v <= 127; }

/// What is compared: general registers, RIP, RFLAGS, the data/stack memory and,
/// with paging, the paging structures (accessed and dirty flags). In 32-bit code
/// only the low 32 bits of registers are architectural.
struct State {
    u64 gpr[16] = {};
    u64 rip = 0;
    u64 rflags = 2;
    std::vector<u8> mem = std::vector<u8>(kMemEnd - kMemBase);  ///< linear [kMemBase, kMemEnd)
    std::vector<u8> tables;  ///< with paging: the pages of PageMap::table_pages, else empty
};

/// splitmix64: tiny, fast, and the same sequence on every platform.
struct Rng {
    u64 s;
    explicit Rng(u64 seed) : s(seed) {}
    u64 next() {
        u64 z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    /// Uniform in [0, n) (n > 0; the modulo bias is irrelevant here).
    u64 below(u64 n) { return next() % n; }
    /// Uniform in [lo, hi].
    i64 range(i64 lo, i64 hi) { return lo + i64(below(u64(hi - lo) + 1)); }
    bool chance(unsigned percent) { return below(100) < percent; }
    template <class T, size_t N>
    const T& pick(const T (&a)[N]) { return a[below(N)]; }
    /// A value of `bytes` bytes biased towards the edge cases of x86 arithmetic.
    u64 value(unsigned bytes) {
        const u64 mask = bytes == 8 ? ~0ull : (1ull << (bytes * 8)) - 1;
        const u64 top = 1ull << (bytes * 8 - 1);
        switch (below(8)) {
            case 0: return below(4) & mask;                          // 0..3
            case 1: return (mask - below(3)) & mask;                 // -1, -2, -3
            case 2: return (top + below(3) - 1) & mask;              // around the sign bit
            case 3: return below(256);                               // small
            case 4: return (u64(0) - below(256)) & mask;             // small negative
            default: return next() & mask;
        }
    }
};

}  // namespace diff
