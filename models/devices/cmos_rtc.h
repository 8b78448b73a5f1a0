// The MC146818 real-time clock and CMOS RAM at ports 0x70/0x71.
#pragma once
#include <array>

#include "models/devices/byte_port_device.h"

namespace pmusim {

class Machine;

/// Motorola MC146818A RTC with its CMOS RAM, as the PC decodes it (index port
/// 0x70, data port 0x71; 128 bytes as QEMU's mc146818rtc):
///
/// | port | read                      | write                                   |
/// |------|---------------------------|-----------------------------------------|
/// | 0x70 | 0xFF (write-only, QEMU)   | index: bits 6-0 select the byte; bit 7  |
/// |      |                           | (NMI disable on the PC) is ignored      |
/// | 0x71 | the selected byte         | the selected byte                       |
///
/// | index     | contents                                                        |
/// |-----------|-----------------------------------------------------------------|
/// | 0x00-0x09 | seconds, minutes, hours, day of week, date, month, year of the  |
/// |           | fixed time Friday 2024-03-15 13:45:30 (read-only: the clock     |
/// |           | does not run); alarms 0x01, 0x03, 0x05 are stored (reset 0)     |
/// | 0x0A      | register A: 0x26 at reset (32.768 kHz time base, 1024 Hz rate), |
/// |           | bits 6-0 writable; UIP (bit 7) reads 0: never updating          |
/// | 0x0B      | register B: 0x02 at reset (24-hour, BCD, no interrupts),        |
/// |           | writable; DM (bit 2) and 24/12 (bit 1) select how 0x00-0x09 read|
/// | 0x0C      | register C: 0 (no interrupt flags), read-only                   |
/// | 0x0D      | register D: 0x80 (VRT: RAM and time valid), read-only           |
/// | 0x0E-0x7F | RAM, 0 at reset except 0x32 (century, IBM PC/ACPI) = 0x20       |
///
/// The fixed time keeps runs reproducible; its fields all differ so a wrong
/// index shows. Day of week counts Sunday = 1 (datasheet), so Friday = 6.
/// The reset values of A-D are those QEMU sets at realize (hw/rtc/mc146818rtc.c).
class CmosRtc : public BytePortDevice {
public:
    static constexpr u16 kIndexPort = 0x70, kDataPort = 0x71;
    // Register indices (datasheet names).
    static constexpr u8 kSeconds = 0x00, kSecondsAlarm = 0x01, kMinutes = 0x02,
                        kMinutesAlarm = 0x03, kHours = 0x04, kHoursAlarm = 0x05, kDayOfWeek = 0x06,
                        kDayOfMonth = 0x07, kMonth = 0x08, kYear = 0x09, kRegA = 0x0A, kRegB = 0x0B,
                        kRegC = 0x0C, kRegD = 0x0D, kCentury = 0x32;
    static constexpr u8 kRegAUip = 0x80, kRegBDm = 0x04, kRegB24h = 0x02, kRegDVrt = 0x80;

    /// The fixed time, in binary.
    struct Time {
        u8 second, minute, hour, day_of_week, day, month, year, century;
    };
    static constexpr Time kTime{30, 45, 13, 6, 15, 3, 24, 20};

    CmosRtc();
    const char* name() const override { return "cmos-rtc"; }
    /// Maps ports 0x70-0x71.
    void attach(Machine& m);

    u8 index() const { return index_; }
    /// The byte the guest reads at `index` (0-0x7F).
    u8 read_register(u8 index) const;
    void write_register(u8 index, u8 value);

protected:
    u8 read_byte(u16 port) override;
    void write_byte(u16 port, u8 value) override;

private:
    /// `v` (binary) in the format register B selects: BCD unless DM is set.
    u8 encode(u8 v) const;
    u8 encode_hours(u8 hour) const;

    u8 index_ = 0;
    std::array<u8, 128> ram_{};
};

}  // namespace pmusim
