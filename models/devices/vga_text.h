// VGA text-mode memory at physical 0xB8000.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "sim/bus.h"

namespace pmusim {

class Machine;

/// The colour text-mode frame buffer of a VGA (IBM VGA Technical Reference,
/// memory map: B8000h-BFFFFh in text modes 0-3), as an MMIO device so that the
/// MMU never caches it as RAM and every guest store reaches it:
///
/// | physical          | contents                                                |
/// |-------------------|---------------------------------------------------------|
/// | 0xB8000 + 2*i     | character (code page 437) of cell i = row * 80 + column |
/// | 0xB8000 + 2*i + 1 | attribute of cell i (colours; ignored by the rendering) |
/// | 0xB8FA0-0xBFFFF   | further pages, stored                                   |
///
/// Reads and writes of 1-8 bytes are little endian. The memory starts as a blank
/// screen (space, attribute 0x07: what the BIOS leaves after setting mode 3). The
/// CRT controller is not modelled: the screen always shows the first page (start
/// address 0) in 80x25.
class VgaTextMemory : public MmioDevice {
public:
    static constexpr u64 kBase = 0xB8000, kSize = 0x8000;
    static constexpr unsigned kColumns = 80, kRows = 25;

    VgaTextMemory();
    const char* name() const override { return "vga-text"; }
    /// Maps the device at physical 0xB8000-0xBFFFF.
    void attach(Machine& m);

    /// The 25 screen lines: character bytes (NUL shown as a space, as its glyph is
    /// blank), attributes ignored, trailing spaces trimmed.
    std::vector<std::string> lines() const;
    /// True once the guest wrote to the text memory.
    bool written() const { return written_; }

    u64 mmio_read(u64 offset, unsigned size) override;
    void mmio_write(u64 offset, unsigned size, u64 value) override;

private:
    std::array<u8, kSize> mem_;
    bool written_ = false;
};

}  // namespace pmusim
