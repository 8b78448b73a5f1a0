#include "models/devices/vga_text.h"

#include <cstring>

#include "sim/machine.h"

namespace pmusim {

VgaTextMemory::VgaTextMemory() {
    for (size_t i = 0; i < kSize; i += 2) {
        mem_[i] = ' ';
        mem_[i + 1] = 0x07;  // light grey on black
    }
}

void VgaTextMemory::attach(Machine& m) { m.memory_bus().map(kBase, kSize, *this); }

u64 VgaTextMemory::mmio_read(u64 offset, unsigned size) {
    u64 v = 0;
    if (offset + size <= kSize) std::memcpy(&v, &mem_[offset], size);  // little-endian host
    return v;
}

void VgaTextMemory::mmio_write(u64 offset, unsigned size, u64 value) {
    if (offset + size > kSize) return;
    std::memcpy(&mem_[offset], &value, size);
    written_ = true;
}

std::vector<std::string> VgaTextMemory::lines() const {
    std::vector<std::string> out(kRows);
    for (unsigned row = 0; row < kRows; ++row) {
        std::string& line = out[row];
        for (unsigned col = 0; col < kColumns; ++col) {
            const u8 c = mem_[(row * kColumns + col) * 2];
            line.push_back(c == 0 ? ' ' : char(c));
        }
        line.erase(line.find_last_not_of(' ') + 1);
    }
    return out;
}

}  // namespace pmusim
