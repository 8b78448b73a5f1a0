// x86 instruction decoder: Capstone 4 behind pmusim's own DecodedInsn.
#pragma once
#include <memory>

#include "isa/decoded.h"

namespace pmusim {

enum class DecodeStatus : u8 {
    kOk,
    kInvalid,    ///< not an instruction: the processor raises #UD
    kTruncated,  ///< needs more bytes than were available (fetch stopped at a page)
};

/// Decodes single instructions. Capstone (with detail) supplies the opcode
/// identity, ModR/M operands and immediates; pmusim scans prefixes itself and
/// derives operand and address sizes from them, and decodes on its own the
/// byte sequences Capstone 4 gets wrong (isa/decode_fixups.cpp, with a test each).
/// Not thread-safe; about 2 million instructions per second, hence the decode cache.
class Decoder {
public:
    Decoder();
    ~Decoder();
    Decoder(const Decoder&) = delete;
    Decoder& operator=(const Decoder&) = delete;

    /// Decodes the instruction at `bytes` (`n` bytes available, at most 15 used),
    /// located at offset `address` in the code segment, in `mode`.
    DecodeStatus decode(const u8* bytes, size_t n, u64 address, CodeBits mode, DecodedInsn& out);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// Scans legacy prefixes and REX (SDM Vol. 2, 2.1.1 and 2.2.1). Returns the prefix facts;
/// `count` is the number of prefix bytes before the opcode.
Prefixes scan_prefixes(const u8* bytes, size_t n, CodeBits mode);

/// Operand size (bytes) of a non-byte instruction form: REX.W, then 66, then the mode default.
inline u8 operand_size(const Prefixes& p, CodeBits mode) {
    if (mode == CodeBits::k64 && (p.rex & 8)) return 8;
    const bool wide = (mode == CodeBits::k16) == p.opsize;
    return wide ? 4 : 2;
}
/// Address size (bytes) from the mode and 67 (SDM Vol. 2, 2.2.1.3 / Table 2-2).
inline u8 address_size(const Prefixes& p, CodeBits mode) {
    switch (mode) {
        case CodeBits::k64: return p.addrsize ? 4 : 8;
        case CodeBits::k32: return p.addrsize ? 2 : 4;
        default: return p.addrsize ? 4 : 2;
    }
}

}  // namespace pmusim
