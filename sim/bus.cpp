#include "sim/bus.h"

#include <cstring>

namespace pmusim {

namespace icl = boost::icl;

void MemoryBus::map(u64 base, u64 size, MmioDevice& dev) {
    auto range = icl::interval<u64>::right_open(base, base + size);
    if (size == 0 || icl::intersects(devices_, range))
        throw BusConflict("device '" + std::string(dev.name()) + "' overlaps another device");
    devices_ += std::make_pair(range, std::set<Region>{Region{base, &dev}});
}

const MemoryBus::Region* MemoryBus::find(u64 pa) const {
    auto it = devices_.find(pa);
    return it == devices_.end() ? nullptr : &*it->second.begin();
}

bool MemoryBus::page_is_ram(u64 pfn) const {
    if (pfn >= ram_.page_count()) return false;
    const u64 base = pfn * kPageSize;
    return !icl::intersects(devices_, icl::interval<u64>::right_open(base, base + kPageSize));
}

u64 MemoryBus::read(u64 pa, unsigned size) {
    if (const Region* r = find(pa)) return r->dev->mmio_read(pa - r->base, size);
    const u64 pfn = pa / kPageSize;
    if (pfn >= ram_.page_count()) return size == 8 ? ~0ull : ((1ull << (size * 8)) - 1);
    u64 v = 0;
    std::memcpy(&v, ram_.page_for_read(pfn) + (pa & kPageMask), size);
    return v;
}

void MemoryBus::write(u64 pa, unsigned size, u64 value) {
    if (const Region* r = find(pa)) return r->dev->mmio_write(pa - r->base, size, value);
    const u64 pfn = pa / kPageSize;
    if (pfn >= ram_.page_count()) return;
    std::memcpy(ram_.page_for_write(pfn) + (pa & kPageMask), &value, size);
}

void PortBus::map(u16 first, u32 count, PortDevice& dev) {
    auto range = icl::interval<u32>::right_open(first, u32(first) + count);
    if (count == 0 || u32(first) + count > 0x10000 || icl::intersects(devices_, range))
        throw BusConflict("port device '" + std::string(dev.name()) + "' overlaps another device");
    devices_ += std::make_pair(range, std::set<PortDevice*>{&dev});
}

PortDevice* PortBus::find(u16 port) const {
    auto it = devices_.find(port);
    return it == devices_.end() ? nullptr : *it->second.begin();
}

u32 PortBus::read(u16 port, unsigned size) {
    if (PortDevice* d = find(port)) return d->port_read(port, size);
    return size == 4 ? ~0u : ((1u << (size * 8)) - 1);
}

void PortBus::write(u16 port, unsigned size, u32 value) {
    if (PortDevice* d = find(port)) d->port_write(port, size, value);
}

}  // namespace pmusim
