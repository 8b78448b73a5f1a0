// The physical memory bus and the port-I/O bus.
#pragma once
#include <boost/icl/interval_map.hpp>
#include <set>
#include <stdexcept>
#include <string>

#include "sim/phys_memory.h"

namespace pmusim {

/// A device decoding a range of physical addresses (SDM-neutral; e.g. the local APIC).
class MmioDevice {
public:
    virtual ~MmioDevice() = default;
    virtual const char* name() const = 0;
    /// Reads `size` (1, 2, 4 or 8) bytes at `offset` bytes from the region start.
    virtual u64 mmio_read(u64 offset, unsigned size) = 0;
    virtual void mmio_write(u64 offset, unsigned size, u64 value) = 0;
};

/// A device decoding a range of I/O ports (SDM Vol. 1, ch. 19).
class PortDevice {
public:
    virtual ~PortDevice() = default;
    virtual const char* name() const = 0;
    /// Reads `size` (1, 2 or 4) bytes from `port`.
    virtual u32 port_read(u16 port, unsigned size) = 0;
    virtual void port_write(u16 port, unsigned size, u32 value) = 0;
};

/// Raised when a device or memory region is placed over another one.
struct BusConflict : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Routes physical addresses to RAM or to MMIO devices.
/// Addresses claimed by a device go to it; other addresses below the RAM size go
/// to RAM; the rest is open bus: reads return all ones, writes are dropped
/// (as on a PC with nothing decoding the address).
class MemoryBus {
public:
    explicit MemoryBus(PhysicalMemory& ram) : ram_(ram) {}

    /// Maps `dev` at physical [base, base+size). Throws BusConflict on overlap.
    void map(u64 base, u64 size, MmioDevice& dev);

    PhysicalMemory& ram() { return ram_; }

    /// True if page `pfn` is plain RAM in its entirety (no device overlaps it),
    /// so the MMU may cache a host pointer to it.
    bool page_is_ram(u64 pfn) const;

    /// Reads `size` bytes (1..8, not crossing a page) at physical address `pa`, little endian.
    u64 read(u64 pa, unsigned size);
    void write(u64 pa, unsigned size, u64 value);

private:
    struct Region {
        u64 base;
        MmioDevice* dev;
        bool operator<(const Region& o) const { return base < o.base; }
        bool operator==(const Region& o) const { return base == o.base && dev == o.dev; }
    };
    using Map = boost::icl::interval_map<u64, std::set<Region>>;
    const Region* find(u64 pa) const;

    PhysicalMemory& ram_;
    Map devices_;
};

/// Routes the 64 Ki I/O ports to devices. Unclaimed ports read as all ones and
/// ignore writes (SDM Vol. 1, 19.3: no device responds).
class PortBus {
public:
    /// Claims ports [first, first+count) for `dev`. Throws BusConflict on overlap.
    void map(u16 first, u32 count, PortDevice& dev);
    u32 read(u16 port, unsigned size);
    void write(u16 port, unsigned size, u32 value);

private:
    using Map = boost::icl::interval_map<u32, std::set<PortDevice*>>;
    PortDevice* find(u16 port) const;
    Map devices_;
};

}  // namespace pmusim
