#include "sim/phys_memory.h"

#include <cstring>

namespace pmusim {

alignas(64) const u8 PhysicalMemory::zero_page_[kPageSize] = {};

PhysicalMemory::PhysicalMemory(u64 size_bytes) : pages_((size_bytes + kPageMask) / kPageSize) {}

u8* PhysicalMemory::page_for_write(u64 pfn) {
    auto& slot = pages_[pfn];
    if (!slot) {
        slot.reset(new u8[kPageSize]);
        std::memset(slot.get(), 0, kPageSize);
        ++allocated_;
    }
    return slot.get();
}

}  // namespace pmusim
