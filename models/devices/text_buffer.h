// The text a guest wrote to an output device (debug console, serial line).
#pragma once
#include <string>

#include "sim/types.h"

namespace pmusim {

/// Bytes appended one at a time, kept as written (no character translation).
/// Holds at most kCapacity bytes so a guest printing in a loop cannot exhaust
/// host memory; later bytes are counted in dropped().
class TextBuffer {
public:
    static constexpr size_t kCapacity = 1u << 20;

    void append(u8 byte) {
        if (text_.size() < kCapacity)
            text_.push_back(char(byte));
        else
            ++dropped_;
    }
    const std::string& text() const { return text_; }
    u64 dropped() const { return dropped_; }
    void clear() {
        text_.clear();
        dropped_ = 0;
    }

private:
    std::string text_;
    u64 dropped_ = 0;
};

}  // namespace pmusim
