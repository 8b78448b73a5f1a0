// Guest RAM: a sparse, page-granular store.
#pragma once
#include <memory>
#include <vector>

#include "sim/types.h"

namespace pmusim {

constexpr u64 kPageSize = 4096;
constexpr u64 kPageMask = kPageSize - 1;

/// Guest physical RAM of a fixed size in bytes, allocated 4 KiB page by page on
/// first write. Reading a page never written returns zeros (a shared zero page),
/// so a 4 GiB guest costs only what it touches.
class PhysicalMemory {
public:
    /// @param size_bytes RAM size; rounded up to whole pages.
    explicit PhysicalMemory(u64 size_bytes);

    u64 size() const { return pages_.size() * kPageSize; }
    u64 page_count() const { return pages_.size(); }

    /// Host pointer to page `pfn` for reading (the zero page if never written).
    /// Precondition: pfn < page_count().
    const u8* page_for_read(u64 pfn) const {
        const u8* p = pages_[pfn].get();
        return p ? p : zero_page_;
    }
    /// Host pointer to page `pfn` for writing, allocating it on first use.
    u8* page_for_write(u64 pfn);

    /// Number of pages allocated so far (for reports and tests).
    u64 allocated_pages() const { return allocated_; }

private:
    std::vector<std::unique_ptr<u8[]>> pages_;
    u64 allocated_ = 0;
    static const u8 zero_page_[kPageSize];
};

}  // namespace pmusim
