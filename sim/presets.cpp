#include "sim/presets.h"

#include <cstring>
#include <vector>

#include "sim/segmentation.h"

namespace pmusim {

namespace L = preset_layout;

const char* preset_name(StartPreset p) {
    switch (p) {
        case StartPreset::kReal16: return "real16";
        case StartPreset::kProtected32: return "protected32";
        case StartPreset::kProtected32Pae: return "protected32-pae";
        case StartPreset::kLong64: return "long64";
    }
    return "?";
}

std::optional<StartPreset> preset_from_name(const std::string& n) {
    for (StartPreset p : {StartPreset::kReal16, StartPreset::kProtected32, StartPreset::kProtected32Pae,
                          StartPreset::kLong64})
        if (n == preset_name(p)) return p;
    return std::nullopt;
}

namespace {

/// Segment descriptor (SDM Vol. 3, 3.4.5): flat 4 GiB, `access` byte, `flags` nibble.
u64 seg_desc(u8 access, u8 flags) { return 0xFFFFull | (u64(access) << 40) | (0xFull << 48) | (u64(flags) << 52); }

/// System descriptor for a TSS at `base` with `limit`; 16 bytes (two u64) in IA-32e mode.
void tss_desc(u64* out, u64 base, u32 limit) {
    out[0] = (limit & 0xFFFF) | ((base & 0xFFFFFF) << 16) | (0x89ull << 40) | (u64((limit >> 16) & 0xF) << 48) |
             (((base >> 24) & 0xFF) << 56);
    out[1] = base >> 32;
}

void put(Machine& m, u64 pa, const void* p, size_t n) { m.load(pa, p, n); }

/// Loads a segment register from the preset GDT as the processor would.
void load(Machine& m, u8 sreg, u16 sel) {
    Cpu& c = m.cpu();
    Descriptor d;
    m.peek(L::kGdt + (sel & 0xFFF8), &d.lo, 8);
    c.seg[sreg] = to_cache(sel, d);
}

}  // namespace

std::optional<u8> default_stub_vector(u64 rip) {
    if (rip < L::kStubs || rip >= L::kStubs + 256 * L::kStubSize) return std::nullopt;
    return u8((rip - L::kStubs) / L::kStubSize);
}

void set_idt_gate(Machine& m, u8 vector, u64 handler, unsigned dpl, bool trap, unsigned ist) {
    const bool ia32e = m.cpu().long_mode();
    const u16 sel = ia32e ? L::kCode64 : L::kCode32;
    const u64 type = trap ? 0xF : 0xE;
    u64 g[2];
    g[0] = (handler & 0xFFFF) | (u64(sel) << 16) | (u64(ia32e ? (ist & 7) : 0) << 32) |
           ((0x80 | (u64(dpl & 3) << 5) | type) << 40) | (((handler >> 16) & 0xFFFF) << 48);
    g[1] = handler >> 32;
    put(m, L::kIdt + u64(vector) * (ia32e ? 16 : 8), g, ia32e ? 16 : 8);
}

void apply_preset(Machine& m, StartPreset preset, u64 entry) {
    if (m.ram().size() < 2 * 1024 * 1024) throw std::out_of_range("presets need at least 2 MiB of RAM");
    m.reset();
    Cpu& c = m.cpu();
    m.set_stop_on_exception(false);
    if (preset == StartPreset::kReal16) {
        c.seg[CS].selector = 0;
        c.seg[CS].base = 0;
        c.rip = entry & 0xFFFF;
        c.gpr[RSP] = 0x7C00;
        c.update_mode();
        return;
    }
    const bool ia32e = preset == StartPreset::kLong64;
    // GDT (Linux x86-64 layout).
    u64 gdt[10] = {};
    gdt[1] = seg_desc(0x9B, 0xC);  // 0x08 ring-0 code, 32-bit
    gdt[2] = seg_desc(0x9B, 0xA);  // 0x10 ring-0 code, 64-bit (L=1)
    gdt[3] = seg_desc(0x93, 0xC);  // 0x18 ring-0 data
    gdt[4] = seg_desc(0xFB, 0xC);  // 0x20 ring-3 code, 32-bit
    gdt[5] = seg_desc(0xF3, 0xC);  // 0x28 ring-3 data
    gdt[6] = seg_desc(0xFB, 0xA);  // 0x30 ring-3 code, 64-bit
    gdt[7] = seg_desc(0xF3, 0xC);  // 0x38 ring-3 data (SYSEXIT to 64-bit code: SYSENTER_CS + 40)
    tss_desc(&gdt[8], L::kTss, 0x67);
    put(m, L::kGdt, gdt, sizeof gdt);
    // TSS: ring-0 stack and IST1 (64-bit layout) or ESP0/SS0 (32-bit layout); no I/O bitmap.
    u8 tss[0x68] = {};
    if (ia32e) {
        std::memcpy(tss + 4, &L::kRsp0, 8);
        std::memcpy(tss + 0x24, &L::kIst1, 8);
    } else {
        const u32 esp0 = u32(L::kRsp0);
        const u16 ss0 = L::kData;
        std::memcpy(tss + 4, &esp0, 4);
        std::memcpy(tss + 8, &ss0, 2);
    }
    const u16 iomap = 0x68;
    std::memcpy(tss + 0x66, &iomap, 2);
    put(m, L::kTss, tss, sizeof tss);
    // Default handler stubs: cli; hlt (padded with int3).
    std::vector<u8> stubs(256 * L::kStubSize, 0xCC);
    for (unsigned v = 0; v < 256; ++v) {
        stubs[v * L::kStubSize] = 0xFA;
        stubs[v * L::kStubSize + 1] = 0xF4;
    }
    put(m, L::kStubs, stubs.data(), stubs.size());

    c.gdtr = TableRegister{L::kGdt, u16(sizeof gdt - 1)};
    c.idtr = TableRegister{L::kIdt, u16(256 * (ia32e ? 16 : 8) - 1)};
    c.cr0 = cr0::kPE | cr0::kET | cr0::kNE | cr0::kWP;
    if (preset != StartPreset::kProtected32) {
        const u64 pt = L::kPageTables;
        const std::vector<u64> t = identity_map_4gib(pt, ia32e);
        put(m, pt, t.data(), t.size() * 8);
        c.cr4 = cr4::kPAE;
        c.cr3 = ia32e ? pt : pt + 0x1000;
        c.efer = ia32e ? (efer::kLME | efer::kLMA | efer::kNXE | efer::kSCE) : efer::kNXE;
        c.cr0 |= cr0::kPG;
        if (!ia32e)
            for (u64 k = 0; k < 4; ++k) c.pdpte[k] = t[512 + k];
    }
    load(m, CS, ia32e ? L::kCode64 : L::kCode32);
    for (u8 s : {DS, ES, SS, FS, GS}) load(m, s, L::kData);
    c.tr = SegmentCache{L::kTssSel, L::kTss, 0x67, 0x8B};  // busy 32/64-bit TSS
    gdt[8] |= 2ull << 40;
    put(m, L::kGdt + 8 * 8, &gdt[8], 8);
    for (unsigned v = 0; v < 256; ++v) set_idt_gate(m, u8(v), L::kStubs + v * L::kStubSize);
    c.cpl = 0;
    c.rip = entry;
    c.gpr[RSP] = L::kStackTop;
    c.sys.star = 0x0023001000000000ull;
    c.sys.sysenter_cs = L::kCode64 == 0x10 && ia32e ? 0x10 : L::kCode32;
    c.mmu.flush_tlb();
    c.update_mode();
    c.pending |= kPendingPagingChange;
}

}  // namespace pmusim
