#include "models/devices/cmos_rtc.h"

#include "sim/machine.h"

namespace pmusim {

CmosRtc::CmosRtc() {
    ram_[kRegA] = 0x26;
    ram_[kRegB] = kRegB24h;
    ram_[kCentury] = encode(kTime.century);  // 0x20 (register B selects BCD)
}

void CmosRtc::attach(Machine& m) { m.port_bus().map(kIndexPort, 2, *this); }

u8 CmosRtc::encode(u8 v) const {
    return (ram_[kRegB] & kRegBDm) ? v : u8((v / 10) << 4 | (v % 10));
}

u8 CmosRtc::encode_hours(u8 hour) const {
    if (ram_[kRegB] & kRegB24h) return encode(hour);
    // 12-hour mode (datasheet, "Time, Calendar and Alarm Locations"): 1-12, bit 7 = PM.
    const u8 h12 = hour % 12 == 0 ? 12 : hour % 12;
    return u8(encode(h12) | (hour >= 12 ? 0x80 : 0));
}

u8 CmosRtc::read_register(u8 index) const {
    switch (index & 0x7F) {
        case kSeconds:
            return encode(kTime.second);
        case kMinutes:
            return encode(kTime.minute);
        case kHours:
            return encode_hours(kTime.hour);
        case kDayOfWeek:
            return encode(kTime.day_of_week);
        case kDayOfMonth:
            return encode(kTime.day);
        case kMonth:
            return encode(kTime.month);
        case kYear:
            return encode(kTime.year);
        case kRegA:
            return ram_[kRegA] & ~kRegAUip;
        case kRegC:
            return 0;
        case kRegD:
            return kRegDVrt;
        default:
            return ram_[index & 0x7F];
    }
}

void CmosRtc::write_register(u8 index, u8 value) {
    switch (index & 0x7F) {
        case kSeconds:
        case kMinutes:
        case kHours:
        case kDayOfWeek:
        case kDayOfMonth:
        case kMonth:
        case kYear:
        case kRegC:
        case kRegD:
            return;  // the fixed time and the status registers are read-only
        case kRegA:
            ram_[kRegA] = value & ~kRegAUip;
            return;
        default:
            ram_[index & 0x7F] = value;
            return;
    }
}

u8 CmosRtc::read_byte(u16 port) { return port == kDataPort ? read_register(index_) : 0xFF; }

void CmosRtc::write_byte(u16 port, u8 value) {
    if (port == kDataPort)
        write_register(index_, value);
    else if (port == kIndexPort)
        index_ = value & 0x7F;
}

}  // namespace pmusim
