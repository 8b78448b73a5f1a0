// QEMU's firmware configuration device (fw_cfg), traditional I/O interface.
#pragma once
#include <map>
#include <vector>

#include "sim/bus.h"

namespace pmusim {

class Machine;

/// QEMU fw_cfg, x86 I/O interface (docs/specs/fw_cfg.rst; hw/nvram/fw_cfg.c,
/// the "comb" region at 0x510 of size 2), without DMA:
///
/// | port        | access        | meaning                                       |
/// |-------------|---------------|-----------------------------------------------|
/// | 0x510/0x511 | 16-bit write  | selector: selects an item, data offset 0      |
/// | 0x510/0x511 | 8-bit read    | data: the next byte of the item, 0 past its   |
/// |             |               | end or for an unknown key                     |
/// | 0x510/0x511 | 8-bit write   | data write: ignored (QEMU no longer supports) |
/// | 0x510/0x511 | other access  | reads 0, writes ignored (QEMU rejects them)   |
///
/// Items (key: contents):
/// - 0x0000 FW_CFG_SIGNATURE: "QEMU"
/// - 0x0001 FW_CFG_ID: 0x00000001 (u32 LE; bit 0 = traditional interface, no DMA)
/// - 0x0005 FW_CFG_NB_CPUS: 0x0001 (u16 LE; one core)
/// Selector bit 14 (FW_CFG_WRITE_CHANNEL) is ignored and bit 15 (FW_CFG_ARCH_LOCAL)
/// selects the architecture's items, of which there are none, as in QEMU. The
/// signature is selected at reset.
class FwCfg : public PortDevice {
public:
    static constexpr u16 kBase = 0x510, kPortCount = 2;
    static constexpr u16 kSignature = 0x0000, kId = 0x0001, kNbCpus = 0x0005;
    static constexpr u16 kWriteChannel = 0x4000, kArchLocal = 0x8000;
    static constexpr u32 kIdTraditional = 0x1;

    FwCfg();
    const char* name() const override { return "fw_cfg"; }
    /// Maps ports 0x510-0x511.
    void attach(Machine& m);
    /// Adds or replaces the item `key` (as QEMU's fw_cfg_add_bytes).
    void add_bytes(u16 key, std::vector<u8> data);
    /// Selects `key` as a 16-bit write to the selector does.
    void select(u16 key);

    u32 port_read(u16 port, unsigned size) override;
    void port_write(u16 port, unsigned size, u32 value) override;

private:
    std::map<u16, std::vector<u8>> items_;
    const std::vector<u8>* current_ = nullptr;  ///< the selected item, or nullptr
    size_t offset_ = 0;
};

}  // namespace pmusim
