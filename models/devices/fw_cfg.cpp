#include "models/devices/fw_cfg.h"

#include "sim/machine.h"

namespace pmusim {

namespace {

template <typename T>
std::vector<u8> little_endian(T v) {
    std::vector<u8> bytes(sizeof(T));
    for (size_t i = 0; i < sizeof(T); ++i) bytes[i] = u8(v >> (8 * i));
    return bytes;
}

}  // namespace

FwCfg::FwCfg() {
    add_bytes(kSignature, {'Q', 'E', 'M', 'U'});
    add_bytes(kId, little_endian<u32>(kIdTraditional));
    add_bytes(kNbCpus, little_endian<u16>(1));
    select(kSignature);  // fw_cfg_reset
}

void FwCfg::attach(Machine& m) { m.port_bus().map(kBase, kPortCount, *this); }

void FwCfg::add_bytes(u16 key, std::vector<u8> data) {
    items_[key & ~kWriteChannel] = std::move(data);  // map nodes stay put: current_ remains valid
}

void FwCfg::select(u16 key) {
    auto it = items_.find(key & ~kWriteChannel);
    current_ = it == items_.end() ? nullptr : &it->second;
    offset_ = 0;
}

u32 FwCfg::port_read(u16, unsigned size) {
    if (size != 1 || !current_ || offset_ >= current_->size()) return 0;
    return (*current_)[offset_++];
}

void FwCfg::port_write(u16, unsigned size, u32 value) {
    if (size == 2) select(u16(value));
}

}  // namespace pmusim
