#include "tests/support/system_fixture.h"

#include <catch2/catch.hpp>

namespace pmusim::test {

SystemFixture::SystemFixture(StartPreset preset, const std::string& body, Options opt)
    : width(preset == StartPreset::kLong64 ? 8 : preset == StartPreset::kReal16 ? 2 : 4) {
    const std::string bits = width == 8   ? "bits 64\n%define STACKP rsp\n%define ACC rax\n"
                             : width == 4 ? "bits 32\n%define STACKP esp\n%define ACC eax\n"
                                          : "bits 16\n";
    std::string src = bits + "org 0x1000\n%define RES " + std::to_string(kRes) + "\n" + body;
    if (width > 2) {
        src += "\n" + bits + R"(
align 32, db 0xCC
handlers:
%assign v 0
%rep 32
    align 32, db 0xCC
    mov dword [ss:RES + 0x100], v
    mov [ss:RES + 0x108], STACKP
    jmp record_tail
%assign v v + 1
%endrep
record_tail:
)";
        if (opt.record_cr2) src += "    mov ACC, cr2\n    mov [ss:RES + 0x110], ACC\n";
        src += "fault_halt:\n    hlt\n";
    }
    prog = assemble_nasm(src, "system_test.asm");
    m.load(0x1000, prog.bytes.data(), prog.bytes.size());
    apply_preset(m, preset, sym("start"));
    if (width > 2)
        for (unsigned v = 0; v < 32; ++v) set_idt_gate(m, u8(v), sym("handlers") + 32 * v);
    if (opt.int80_to_done) set_idt_gate(m, 0x80, sym("done"), 3);
    put(kRes + 0x100, ~0ull);
    for (EventKind k : {EventKind::kException, EventKind::kInterrupt})
        m.cpu().events.subscribe(k, [this](const Event& e) { events.push_back(e); });
}

u64 SystemFixture::phys(u64 pa, unsigned n) {
    u64 v = 0;
    m.peek(pa, &v, n);
    return v;
}

void SystemFixture::gdt(unsigned index, u64 desc) {
    put(preset_layout::kGdt + index * 8, desc);
    m.cpu().gdtr.limit = std::max<u16>(m.cpu().gdtr.limit, u16(index * 8 + 7));
}

void SystemFixture::gate_not_present(u8 v) {
    const u64 a = preset_layout::kIdt + v * (width == 8 ? 16 : 8) + 5;
    put(a, phys(a, 1) & 0x7F, 1);
}

int SystemFixture::run() {
    const RunResult r = run_raw();
    const auto stub = default_stub_vector(r.rip);
    INFO("stop " << stop_reason_name(r.reason) << " at " << std::hex << r.rip << " unhandled vector "
                 << (stub ? int(*stub) : -1) << " " << r.message);
    REQUIRE(r.reason == StopReason::kHalt);
    if (r.rip == sym("done") + 1) return -1;
    REQUIRE(r.rip == sym("fault_halt") + 1);
    return int(phys(kRes + 0x100, 4));
}

}  // namespace pmusim::test
