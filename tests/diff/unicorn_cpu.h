// Unicorn 2 side of the differential test: one engine per mode with the guest
// layout of diff_common.h mapped (code, data+stack; nothing else, so a stray access
// faults; the paged mode adds the paging-structure pool and the TLB-flush stub),
// state in and out, run to an address, single steps.
#pragma once
#include <unicorn/unicorn.h>

#include <stdexcept>
#include <string>

#include "tests/diff/diff_common.h"
#include "tests/diff/known_defects.h"
#include "tests/diff/page_map.h"

namespace diff {

class UnicornCpu {
public:
    UnicornCpu(int bits, bool paged) : bits_(bits), paged_(paged) { open(); }
    ~UnicornCpu() { if (uc_) uc_close(uc_); }
    UnicornCpu(const UnicornCpu&) = delete;

    /// Loads code (at kCodeBase), paging structures (if `pm`) and a full state.
    /// UcDefect::kIdentityPaging: code and data go to their linear addresses.
    void load(const std::vector<u8>& code, const State& s, const PageMap& pm) {
        check(uc_mem_write(uc_, kCodeBase, code.data(), code.size()), "mem_write code");
        table_pages_ = pm.table_pages;
        if (pm) {
            flush_tlb();
            for (size_t k = 0; k < table_pages_.size(); ++k)
                check(uc_mem_write(uc_, table_pages_[k], &pm.tables[k * kPage], kPage), "mem_write tables");
            const std::pair<uc_x86_reg, u64> crs[] = {{UC_X86_REG_CR4, pm.cr4}, {UC_X86_REG_CR3, pm.cr3},
                                                      {UC_X86_REG_CR0, pm.cr0}};
            for (auto [reg, v] : crs) check(uc_reg_write(uc_, reg, &v), "reg_write cr");
        }
        // UcDefect::kStaleTranslations: uc_mem_write does not invalidate translations. This
        // looks kCodeBase up in the TLB, so it comes after the flush (with paging it walks
        // the new structures as the block's first fetch does).
        check(uc_ctl_remove_cache(uc_, kCodeBase, kCodeEnd), "remove_cache");
        set_state(s);
    }
    void set_state(const State& s) {
        check(uc_mem_write(uc_, kMemBase, s.mem.data(), s.mem.size()), "mem_write data");
        for (int r = 0; r < nregs(); ++r) {
            u64 v = bits_ == 64 ? s.gpr[r] : u32(s.gpr[r]);
            check(uc_reg_write(uc_, reg_id(r), &v), "reg_write");
        }
        u64 rip = s.rip, fl = s.rflags;
        check(uc_reg_write(uc_, bits_ == 64 ? UC_X86_REG_RIP : UC_X86_REG_EIP, &rip), "reg_write rip");
        check(uc_reg_write(uc_, bits_ == 64 ? UC_X86_REG_RFLAGS : UC_X86_REG_EFLAGS, &fl), "reg_write flags");
    }
    void get_state(State& s) {
        for (int r = 0; r < 16; ++r) s.gpr[r] = 0;
        for (int r = 0; r < nregs(); ++r) {
            u64 v = 0;
            check(uc_reg_read(uc_, reg_id(r), &v), "reg_read");
            s.gpr[r] = bits_ == 64 ? v : u32(v);
        }
        u64 rip = 0, fl = 0;
        check(uc_reg_read(uc_, bits_ == 64 ? UC_X86_REG_RIP : UC_X86_REG_EIP, &rip), "reg_read rip");
        check(uc_reg_read(uc_, bits_ == 64 ? UC_X86_REG_RFLAGS : UC_X86_REG_EFLAGS, &fl), "reg_read flags");
        s.rip = bits_ == 64 ? rip : u32(rip);
        s.rflags = u32(fl);
        check(uc_mem_read(uc_, kMemBase, s.mem.data(), s.mem.size()), "mem_read");
        s.tables.resize(table_pages_.size() * kPage);
        for (size_t k = 0; k < table_pages_.size(); ++k)
            check(uc_mem_read(uc_, table_pages_[k], &s.tables[k * kPage], kPage), "mem_read tables");
    }

    /// Runs from the current RIP until RIP == `until` (not executed). Returns the Unicorn
    /// status; after an error the engine is reopened (its TCG state is not reusable:
    /// a later run may fail spuriously), so reload the state before the next run.
    uc_err run_until(u64 until) {
        u64 rip = 0;
        uc_reg_read(uc_, bits_ == 64 ? UC_X86_REG_RIP : UC_X86_REG_EIP, &rip);
        const uc_err e = uc_emu_start(uc_, rip, until, 0, 0);
        if (e != UC_ERR_OK) reopen_after_error_ = true;
        return e;
    }
    /// Executes one instruction (one iteration of a REP string instruction).
    uc_err step() {
        u64 rip = 0;
        uc_reg_read(uc_, bits_ == 64 ? UC_X86_REG_RIP : UC_X86_REG_EIP, &rip);
        const uc_err e = uc_emu_start(uc_, rip, 0, 0, 1);
        if (e != UC_ERR_OK) reopen_after_error_ = true;
        return e;
    }
    /// Like run_until, recording the address of every instruction started (a code
    /// hook: Unicorn then syncs its state at each instruction).
    uc_err trace_until(u64 until, std::vector<u64>& addrs) {
        uc_hook h;
        auto cb = +[](uc_engine*, uint64_t addr, uint32_t, void* user) {
            static_cast<std::vector<u64>*>(user)->push_back(addr);
        };
        check(uc_hook_add(uc_, &h, UC_HOOK_CODE, reinterpret_cast<void*>(cb), &addrs, 1, 0), "hook_add");
        const uc_err e = run_until(until);
        uc_hook_del(uc_, h);
        return e;
    }
    u64 rip() {
        u64 v = 0;
        uc_reg_read(uc_, bits_ == 64 ? UC_X86_REG_RIP : UC_X86_REG_EIP, &v);
        return v;
    }
    /// Reopens the engine if the last run failed (call before loading a new state).
    void recover() {
        if (!reopen_after_error_) return;
        uc_close(uc_);
        uc_ = nullptr;
        open();
    }

private:
    /// UcDefect::kCrWriteNoFlush: runs MOV CR3, EAX (0F 22 D8) from the stub page, which
    /// flushes the TLB (SDM Vol. 3, 4.10.4.1), under the current paging structures. (With
    /// paging off Unicorn does not flush, but then it has only translated the stub page.)
    void flush_tlb() {
        u64 cr3 = 0;
        check(uc_reg_read(uc_, UC_X86_REG_CR3, &cr3), "reg_read cr3");
        check(uc_reg_write(uc_, UC_X86_REG_EAX, &cr3), "reg_write eax");
        check(uc_emu_start(uc_, kStubPage, kStubPage + 3, 0, 0), "run the TLB-flush stub");
    }
    int nregs() const { return bits_ == 64 ? 16 : 8; }
    uc_x86_reg reg_id(int r) const {
        static const uc_x86_reg k64[16] = {
            UC_X86_REG_RAX, UC_X86_REG_RCX, UC_X86_REG_RDX, UC_X86_REG_RBX,
            UC_X86_REG_RSP, UC_X86_REG_RBP, UC_X86_REG_RSI, UC_X86_REG_RDI,
            UC_X86_REG_R8,  UC_X86_REG_R9,  UC_X86_REG_R10, UC_X86_REG_R11,
            UC_X86_REG_R12, UC_X86_REG_R13, UC_X86_REG_R14, UC_X86_REG_R15};
        static const uc_x86_reg k32[8] = {
            UC_X86_REG_EAX, UC_X86_REG_ECX, UC_X86_REG_EDX, UC_X86_REG_EBX,
            UC_X86_REG_ESP, UC_X86_REG_EBP, UC_X86_REG_ESI, UC_X86_REG_EDI};
        return bits_ == 64 ? k64[r] : k32[r];
    }
    void open() {
        check(uc_open(UC_ARCH_X86, bits_ == 64 ? UC_MODE_64 : UC_MODE_32, &uc_), "uc_open");
        check(uc_mem_map(uc_, kCodeBase, kCodeEnd - kCodeBase, UC_PROT_ALL), "map code");
        check(uc_mem_map(uc_, kMemBase, kMemEnd - kMemBase, UC_PROT_READ | UC_PROT_WRITE), "map data");
        if (paged_) {
            static const u8 kMovCr3Eax[] = {0x0F, 0x22, 0xD8};
            check(uc_mem_map(uc_, kStubPage, kPage, UC_PROT_ALL), "map stub");
            check(uc_mem_write(uc_, kStubPage, kMovCr3Eax, sizeof kMovCr3Eax), "mem_write stub");
            check(uc_mem_map(uc_, kTablePool, kTablePoolEnd - kTablePool, UC_PROT_READ | UC_PROT_WRITE), "map tables");
        }
        reopen_after_error_ = false;
    }
    static void check(uc_err e, const char* what) {
        if (e != UC_ERR_OK) throw std::runtime_error(std::string("unicorn ") + what + ": " + uc_strerror(e));
    }

    int bits_;
    bool paged_;
    std::vector<u64> table_pages_;  ///< paging-structure pages of the loaded block
    uc_engine* uc_ = nullptr;
    bool reopen_after_error_ = false;
};

}  // namespace diff
