// Booting raw modules: a two-module real-mode image that switches to protected
// mode and writes to VGA memory, and the bad-input cases of `pmusim boot`.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "sim/boot.h"
#include "sim/nasm.h"

using namespace pmusim;
namespace fs = std::filesystem;

namespace {

/// Assembles `source` and writes the flat binary to a temporary file.
std::string module_file(const std::string& name, const std::string& source) {
    const AssembledProgram p = assemble_nasm(source, name);
    const fs::path dir = fs::temp_directory_path() / ("pmusim-boot-test-" + std::to_string(std::rand()));
    fs::create_directories(dir);
    std::ofstream(dir / name, std::ios::binary).write(reinterpret_cast<const char*>(p.bytes.data()), p.bytes.size());
    return (dir / name).string();
}

// Module 1, the boot sector at 0000:7C00: real mode, jumps to module 2.
const char* const kBootSector = R"(
    bits 16
    org 0x7C00
    xor ax, ax
    mov ds, ax
    mov ss, ax
    mov sp, 0x7C00
    jmp 0x0000:0x8000
)";

// Module 2 at 0x8000: enters 32-bit protected mode and writes "PM ok" to VGA text memory.
const char* const kSetup = R"(
    bits 16
    org 0x8000
    cli
    lgdt [gdt_desc]
    mov eax, cr0
    or eax, 1
    mov cr0, eax
    jmp 0x08:pm
    bits 32
pm:
    mov ax, 0x10
    mov ds, ax
    mov es, ax
    mov esi, text
    mov edi, 0xB8000
    mov ah, 0x1F
.next:
    lodsb
    test al, al
    jz .done
    stosw
    jmp .next
.done:
    jmp $
text: db "PM ok", 0
align 8
gdt: dq 0, 0x00CF9A000000FFFF, 0x00CF92000000FFFF
gdt_desc: dw 23
          dd gdt
)";

int run_cli(const std::string& args) {
    const int rc = std::system((std::string(PMUSIM_BINARY) + " boot " + args + " > /dev/null 2>&1").c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

}  // namespace

TEST_CASE("a real-mode multi-module image switches to protected mode and writes to VGA memory") {
    BootOptions o;
    o.modules = {{module_file("boot.bin", kBootSector), 0x7C00}, {module_file("setup.bin", kSetup), 0x8000}};
    o.start = "real:0:0x7c00";
    Booted b = boot(o);
    const RunResult r = b.machine->run(RunLimits{10000});
    CHECK(r.reason == StopReason::kIdleLoop);
    CHECK(b.machine->cpu().protected_mode());
    CHECK(b.machine->cpu().code_bits == CodeBits::k32);
    REQUIRE(b.devices->screen_written());
    CHECK(b.devices->screen_lines()[0] == "PM ok");
}

TEST_CASE("pmusim boot: exit status and bad input") {
    const std::string boot = module_file("boot.bin", kBootSector), setup = module_file("setup.bin", kSetup);
    CHECK(run_cli("--module " + boot + "@0x7c00 --module " + setup + "@0x8000") == 0);
    CHECK(run_cli("--module " + boot + "@0x7c00 --module " + setup + "@0x8000 --json") == 0);
    CHECK(run_cli("--module /nonexistent.bin@0x7c00") == 2);                          // missing file
    CHECK(run_cli("--module " + boot + "@0x7c00 --module " + setup + "@0x7c04") == 2);  // overlapping
    CHECK(run_cli("--module " + boot + "@0x3FFFFFA -m 64") == 2);                       // 14 bytes, 6 left
    CHECK(run_cli("--module " + boot + "@zzz") == 2);                                   // bad address
    CHECK(run_cli("--module " + boot + "@0x7c00 --start real:0x10000:0") == 2);         // bad start
    CHECK(run_cli("--module " + boot + "@0x7c00 --start long65") == 2);
    CHECK(run_cli("--module " + boot + "@0x7c00 --cpu pentium9") == 2);
    CHECK(run_cli("") == 2);                                                            // nothing to boot
}
