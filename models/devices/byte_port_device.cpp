#include "models/devices/byte_port_device.h"

namespace pmusim {

u32 BytePortDevice::port_read(u16 port, unsigned size) {
    u32 v = 0;
    for (unsigned i = 0; i < size; ++i) v |= u32(read_byte(u16(port + i))) << (8 * i);
    return v;
}

void BytePortDevice::port_write(u16 port, unsigned size, u32 value) {
    for (unsigned i = 0; i < size; ++i) write_byte(u16(port + i), u8(value >> (8 * i)));
}

}  // namespace pmusim
