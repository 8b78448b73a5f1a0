#include "models/devices/standard_devices.h"

#include "sim/machine.h"

namespace pmusim {

void StandardDevices::attach(Machine& m) {
    console.attach(m);
    uart.attach(m);
    debug_exit.attach(m);
    shutdown.attach(m);
    pic_master.attach(m);
    pic_slave.attach(m);
    pit.attach(m);
    port92.attach(m);
    cmos.attach(m);
    fw_cfg.attach(m);
    vga.attach(m);
}

}  // namespace pmusim
