// The small PC devices of models/devices: debug console, 16550 UART, isa-debug-exit,
// Bochs shutdown port, 8259A/8254 stubs, port 92h, CMOS/RTC, QEMU fw_cfg, VGA text
// memory. Guest programs drive them through IN/OUT and MOV; unit tests call them
// directly. Expected values follow from the conventions cited in each device header.
#include <catch2/catch.hpp>
#include <cstring>

#include "models/devices/standard_devices.h"
#include "sim/machine.h"
#include "tests/support/asm_harness.h"

using namespace pmusim;

namespace {

/// A 32-bit flat guest with the standard devices attached, run to its end.
struct Guest {
    StandardDevices dev;
    std::unique_ptr<Machine> m;
    RunResult run;
    explicit Guest(const std::string& source, u64 max = 100000)
        : m(test::machine_with(32, source)) {
        dev.attach(*m);
        run = m->run(RunLimits{max});
    }
    u64 reg(Gpr r) const { return m->cpu().gpr[r]; }
    std::string mem(u64 pa, size_t n) const {
        std::string s(n, '\0');
        m->peek(pa, s.data(), n);
        return s;
    }
};

/// A machine whose guest only halts: run() ends in kHalt unless a device asked
/// for an exit, which ends it before any instruction executes.
std::unique_ptr<Machine> halting_machine() { return test::machine_with(32, "hlt"); }
RunResult run_after(Machine& m) { return m.run(RunLimits{10}); }

}  // namespace

// ---- guest programs ----------------------------------------------------------

TEST_CASE("guest prints hello through the debug console at port 0xE9", "[devices]") {
    Guest g(R"(
            mov esi, msg
            mov dx, 0xE9
        next:
            lodsb
            test al, al
            jz done
            out dx, al
            jmp next
        done:
            in al, dx           ; Bochs/QEMU readback: 0xE9
            mov bl, al
            hlt
        msg: db "hello", 0)");
    CHECK(g.run.reason == StopReason::kHalt);
    CHECK(g.dev.console_text() == "hello");
    CHECK(g.reg(RBX) == 0xE9);
    CHECK(g.dev.serial_text().empty());
}

TEST_CASE("guest prints hello through the UART, polling LSR.THRE before each byte", "[devices]") {
    Guest g(R"(
            mov esi, msg
        next:
            lodsb
            test al, al
            jz done
            mov bl, al
        wait_thre:
            inc ecx             ; counts LSR reads
            mov dx, 0x3FD       ; LSR
            in al, dx
            mov bh, al
            test al, 0x20       ; THRE
            jz wait_thre
            mov dx, 0x3F8       ; THR
            mov al, bl
            out dx, al
            jmp next
        done:
            hlt
        msg: db "hello", 0)");
    CHECK(g.run.reason == StopReason::kHalt);
    CHECK(g.dev.serial_text() == "hello");
    CHECK(g.reg(RCX) == 5);            // one LSR read per byte: the transmitter is always empty
    CHECK((g.reg(RBX) >> 8) == 0x60);  // LSR = THRE | TEMT
    CHECK(g.dev.console_text().empty());
}

TEST_CASE("guest programs the UART divisor latch through LCR.DLAB and reads it back", "[devices]") {
    Guest g(R"(
            mov dx, 0x3FB
            mov al, 0x80        ; LCR.DLAB = 1
            out dx, al
            mov dx, 0x3F8
            mov al, 0x80        ; DLL: divisor 0x0180 = 300 baud
            out dx, al
            mov dx, 0x3F9
            mov al, 0x01        ; DLM
            out dx, al
            mov dx, 0x3F8
            in al, dx
            mov bl, al          ; DLL
            mov dx, 0x3F9
            in al, dx
            mov bh, al          ; DLM
            mov dx, 0x3FB
            mov al, 0x03        ; 8 data bits, 1 stop bit, no parity, DLAB = 0
            out dx, al
            mov dx, 0x3F9
            mov al, 0xFF
            out dx, al          ; IER: bits 7-4 do not exist
            in al, dx
            mov cl, al
            mov dx, 0x3FB
            in al, dx
            mov ch, al          ; LCR
            mov dx, 0x3F8
            in al, dx           ; RBR: nothing received
            mov dl, al
            hlt)");
    CHECK(g.run.reason == StopReason::kHalt);
    CHECK((g.reg(RBX) & 0xFFFF) == 0x0180);
    CHECK((g.reg(RCX) & 0xFFFF) == 0x030F);
    CHECK((g.reg(RDX) & 0xFF) == 0);
    CHECK(g.dev.uart.divisor() == 0x0180);
    CHECK(g.dev.serial_text().empty());  // DLL writes are not transmitted
}

TEST_CASE("guest exits through isa-debug-exit at 0xF4 with value 0x10: status 0x21", "[devices]") {
    Guest g(R"(
            mov al, 0x10
            out 0xF4, al
            mov ebx, 0xDEAD     ; not executed: the run ends after the OUT
            hlt)");
    CHECK(g.run.reason == StopReason::kGuestExit);
    CHECK(g.run.exit_code == 0x21);
    CHECK(g.run.message == "isa-debug-exit: 0x10 written to port 0xf4, exit status 0x21");
    CHECK(g.run.instructions == 2);
    CHECK(g.run.rip == test::kCodeBase + 4);  // B0 10, E6 F4
    CHECK(g.reg(RBX) == 0);
}

TEST_CASE("isa-debug-exit takes 2- and 4-byte writes whole", "[devices]") {
    Guest w(R"(
            mov ax, 0x1234
            mov dx, 0xF4
            out dx, ax
            hlt)");
    CHECK(w.run.reason == StopReason::kGuestExit);
    CHECK(w.run.exit_code == 0x2469);
    Guest d(R"(
            mov eax, 0x00ABCDEF
            out 0xF4, eax
            hlt)");
    CHECK(d.run.reason == StopReason::kGuestExit);
    CHECK(d.run.exit_code == 0x01579BDF);
}

TEST_CASE("guest writes \"Shutdown\" to port 0x8900: the run ends with status 0", "[devices]") {
    Guest g(R"(
            mov dx, 0x8900
            mov esi, text
            mov ecx, 8
            rep outsb
            mov ebx, 1          ; not executed
            hlt
        text: db "Shutdown")");
    CHECK(g.run.reason == StopReason::kGuestExit);
    CHECK(g.run.exit_code == 0);
    CHECK(g.run.message == "Shutdown port: shutdown requested (port 0x8900)");
    CHECK(g.reg(RCX) == 0);
    CHECK(g.reg(RBX) == 0);
}

TEST_CASE("an interrupted \"Shutdown\" sequence does not end the run", "[devices]") {
    Guest g(R"(
            mov dx, 0x8900
            mov esi, text
            mov ecx, 9
            rep outsb
            hlt
        text: db "Shutdo!wn")");  // '!' restarts the match
    CHECK(g.run.reason == StopReason::kHalt);
    CHECK(g.dev.shutdown.matched() == 0);
}

TEST_CASE("guest reads the fw_cfg signature, ID and CPU count", "[devices]") {
    Guest g(R"(
            mov dx, 0x510
            mov ax, 0x0000      ; FW_CFG_SIGNATURE
            out dx, ax
            mov dx, 0x511
            mov edi, 0x20000
            mov ecx, 5          ; 4 signature bytes and one past the end
            rep insb
            mov dx, 0x510
            mov ax, 0x0001      ; FW_CFG_ID
            out dx, ax
            mov dx, 0x511
            mov edi, 0x20008
            mov ecx, 4
            rep insb
            mov dx, 0x510
            mov ax, 0x0005      ; FW_CFG_NB_CPUS
            out dx, ax
            mov dx, 0x511
            in al, dx
            mov bl, al
            in al, dx
            mov bh, al
            mov dx, 0x510
            mov ax, 0x1234      ; no such item
            out dx, ax
            mov dx, 0x511
            in al, dx
            mov cl, al
            hlt)");
    CHECK(g.run.reason == StopReason::kHalt);
    CHECK(g.mem(0x20000, 5) == std::string("QEMU\0", 5));
    CHECK(g.mem(0x20008, 4) == std::string("\x01\0\0\0", 4));
    CHECK((g.reg(RBX) & 0xFFFF) == 0x0001);
    CHECK((g.reg(RCX) & 0xFF) == 0);
}

TEST_CASE("guest writes CMOS RAM through index/data and reads the fixed RTC time", "[devices]") {
    Guest g(R"(
            mov al, 0x40
            out 0x70, al
            mov al, 0x5A
            out 0x71, al
            mov al, 0xC1        ; bit 7 (NMI disable) is not part of the index
            out 0x70, al
            mov al, 0xA5
            out 0x71, al
            mov al, 0x40
            out 0x70, al
            in al, 0x71
            mov bl, al
            mov al, 0x41
            out 0x70, al
            in al, 0x71
            mov bh, al
            mov al, 0x00        ; seconds
            out 0x70, al
            in al, 0x71
            mov cl, al
            mov al, 0x04        ; hours
            out 0x70, al
            in al, 0x71
            mov ch, al
            mov al, 0x09        ; year
            out 0x70, al
            in al, 0x71
            mov dl, al
            mov al, 0x0B        ; register B
            out 0x70, al
            in al, 0x71
            mov dh, al
            hlt)");
    CHECK(g.run.reason == StopReason::kHalt);
    CHECK((g.reg(RBX) & 0xFFFF) == 0xA55A);
    CHECK((g.reg(RCX) & 0xFFFF) == 0x1330);  // 13 h, 30 s in BCD
    CHECK((g.reg(RDX) & 0xFFFF) == 0x0224);  // register B 0x02 (24 h, BCD), year 24
    CHECK(g.dev.cmos.index() == 0x0B);
}

TEST_CASE("guest sets the A20 bit of port 92h and reads it back", "[devices]") {
    Guest g(R"(
            in al, 0x92
            mov bl, al
            mov al, 0xF2        ; only bit 1 is stored
            out 0x92, al
            in al, 0x92
            mov bh, al
            hlt)");
    CHECK(g.run.reason == StopReason::kHalt);
    CHECK((g.reg(RBX) & 0xFFFF) == 0x0200);
    CHECK(g.dev.port92.a20_enabled());
}

TEST_CASE("guest resets the system through port 92h bit 0", "[devices]") {
    Guest g(R"(
            mov al, 0x03
            out 0x92, al
            hlt)");
    CHECK(g.run.reason == StopReason::kGuestExit);
    CHECK(g.run.exit_code == 0);
    CHECK(g.run.message == "system reset via port 92h");
    CHECK(g.run.instructions == 2);
}

TEST_CASE("guest remaps the PICs, masks them, and programs the PIT", "[devices]") {
    Guest g(R"(
            mov al, 0x11        ; ICW1: edge, cascade, ICW4 needed
            out 0x20, al
            out 0xA0, al
            mov al, 0x20        ; ICW2: vector bases
            out 0x21, al
            mov al, 0x28
            out 0xA1, al
            mov al, 0x04        ; ICW3
            out 0x21, al
            mov al, 0x02
            out 0xA1, al
            mov al, 0x01        ; ICW4: 8086 mode
            out 0x21, al
            out 0xA1, al
            mov al, 0xFB        ; OCW1: all masked but the cascade
            out 0x21, al
            mov al, 0xFF
            out 0xA1, al
            in al, 0x21
            mov bl, al
            in al, 0xA1
            mov bh, al
            mov al, 0x0B        ; OCW3: read ISR
            out 0x20, al
            in al, 0x20
            mov cl, al
            mov al, 0x34        ; PIT counter 0, lobyte/hibyte, mode 2
            out 0x43, al
            mov al, 0x9C
            out 0x40, al
            mov al, 0x2E
            out 0x40, al
            in al, 0x40
            mov ch, al
            hlt)");
    CHECK(g.run.reason == StopReason::kHalt);
    CHECK((g.reg(RBX) & 0xFFFF) == 0xFFFB);
    CHECK((g.reg(RCX) & 0xFFFF) == 0x0000);
    CHECK(g.dev.pic_master.vector_base() == 0x20);
    CHECK(g.dev.pic_slave.vector_base() == 0x28);
    CHECK(g.dev.pic_master.imr() == 0xFB);
    CHECK(g.dev.pic_slave.imr() == 0xFF);
    CHECK_FALSE(g.dev.pic_master.initializing());
    CHECK(g.dev.pit.writes() == 3);
}

TEST_CASE("guest writes PMU to the top-left VGA text cells", "[devices]") {
    Guest g(R"(
            mov dword [0xB8000], 0x074D0750     ; 'P', 'M' with attribute 0x07
            mov word [0xB8004], 0x1F55          ; 'U', white on blue
            mov al, [0xB8002]
            mov bl, al
            mov eax, [0xB8004]                  ; cell 2 and the blank cell 3
            hlt)");
    CHECK(g.run.reason == StopReason::kHalt);
    CHECK(g.dev.screen_written());
    const auto lines = g.dev.screen_lines();
    REQUIRE(lines.size() == 25);
    CHECK(lines[0] == "PMU");
    CHECK(lines[1].empty());
    CHECK(lines[24].empty());
    CHECK((g.reg(RBX) & 0xFF) == 'M');
    CHECK((g.reg(RAX) & 0xFFFFFFFF) == 0x07201F55);
}

TEST_CASE("a guest that never touches the screen leaves it blank and unwritten", "[devices]") {
    Guest g("mov al, [0xB8000]\nmov bl, al\nhlt");
    CHECK_FALSE(g.dev.screen_written());
    CHECK(g.reg(RBX) == ' ');
    CHECK(g.dev.screen_lines() == std::vector<std::string>(25));
}

// ---- unit tests on the devices -----------------------------------------------

TEST_CASE("debug console: byte writes append, wider accesses split into bytes", "[devices]") {
    DebugConsole c;
    c.port_write(0xE9, 1, 'h');
    c.port_write(0xE9, 2, 0x6B6F);  // 'o', 'k'
    c.port_write(0xE9, 4, 0x0A212121);
    CHECK(c.text() == "hok!!!\n");
    CHECK(c.port_read(0xE9, 1) == 0xE9);
    CHECK(c.port_read(0xE9, 2) == 0xE9E9);
    CHECK(c.port_read(0xE9, 4) == 0xE9E9E9E9);
}

TEST_CASE("text buffer keeps at most its capacity and counts the rest", "[devices]") {
    TextBuffer b;
    for (size_t i = 0; i < TextBuffer::kCapacity + 3; ++i) b.append('x');
    CHECK(b.text().size() == TextBuffer::kCapacity);
    CHECK(b.dropped() == 3);
    b.clear();
    CHECK(b.text().empty());
    CHECK(b.dropped() == 0);
}

TEST_CASE("UART reset values and register behaviour", "[devices]") {
    Uart16550 u;
    CHECK(u.port_read(0x3F8, 1) == 0x00);  // RBR
    CHECK(u.port_read(0x3F9, 1) == 0x00);  // IER
    CHECK(u.port_read(0x3FA, 1) == 0x01);  // IIR: no interrupt pending
    CHECK(u.port_read(0x3FB, 1) == 0x00);  // LCR
    CHECK(u.port_read(0x3FC, 1) == 0x00);  // MCR
    CHECK(u.port_read(0x3FD, 1) == 0x60);  // LSR
    CHECK(u.port_read(0x3FE, 1) == 0xB0);  // MSR: DCD, DSR, CTS
    CHECK(u.port_read(0x3FF, 1) == 0x00);  // SCR
    CHECK(u.divisor() == 0x000C);

    SECTION("FCR: FIFO enable shows in IIR bits 7-6, FIFO resets do not stick") {
        u.port_write(0x3FA, 1, 0xC7);
        CHECK(u.port_read(0x3FA, 1) == 0xC1);
        u.port_write(0x3FA, 1, 0x00);
        CHECK(u.port_read(0x3FA, 1) == 0x01);
    }
    SECTION("LSR and MSR ignore writes; SCR and MCR store") {
        u.port_write(0x3FD, 1, 0x00);
        u.port_write(0x3FE, 1, 0x00);
        u.port_write(0x3FF, 1, 0x5A);
        u.port_write(0x3FC, 1, 0xEB);
        CHECK(u.port_read(0x3FD, 1) == 0x60);
        CHECK(u.port_read(0x3FF, 1) == 0x5A);
        CHECK(u.port_read(0x3FC, 1) == 0x0B);  // bits 7-5 read 0
    }
    SECTION("loopback: MSR follows MCR and transmitted bytes stay off the line") {
        u.port_write(0x3FC, 1, 0x10 | 0x02);   // LOOP | RTS
        CHECK(u.port_read(0x3FE, 1) == 0x10);  // CTS
        u.port_write(0x3FC, 1, 0x10 | 0x0D);   // LOOP | OUT2 | OUT1 | DTR
        CHECK(u.port_read(0x3FE, 1) == 0xE0);  // DCD | RI | DSR
        u.port_write(0x3F8, 1, 'x');
        CHECK(u.text().empty());
        u.port_write(0x3FC, 1, 0x00);
        CHECK(u.port_read(0x3FE, 1) == 0xB0);
        u.port_write(0x3F8, 1, 'y');
        CHECK(u.text() == "y");
    }
    SECTION("a 16-bit write to the divisor latch fills DLL and DLM") {
        u.port_write(0x3FB, 1, 0x80);
        u.port_write(0x3F8, 2, 0x0001);  // 115200 baud
        CHECK(u.divisor() == 0x0001);
        CHECK(u.port_read(0x3F8, 2) == 0x0001);
    }
}

TEST_CASE("isa-debug-exit ends the run with (v << 1) | 1", "[devices]") {
    CHECK(IsaDebugExit::exit_status(0) == 1);
    CHECK(IsaDebugExit::exit_status(0x10) == 0x21);
    CHECK(IsaDebugExit::exit_status(0xFFFFFFFF) == int(0xFFFFFFFF));
    auto mp = halting_machine();
    Machine& m = *mp;
    IsaDebugExit d;
    d.attach(m);
    d.port_write(0xF4, 1, 0);
    const RunResult r = run_after(m);
    CHECK(r.reason == StopReason::kGuestExit);
    CHECK(r.exit_code == 1);
    CHECK(r.instructions == 0);
    CHECK(d.port_read(0xF4, 1) == 0);
}

TEST_CASE("shutdown port matches \"Shutdown\" as Bochs does", "[devices]") {
    auto mp = halting_machine();
    Machine& m = *mp;
    ShutdownPort s;
    s.attach(m);
    auto send = [&](const char* text) {
        for (const char* p = text; *p; ++p) s.port_write(0x8900, 1, u8(*p));
    };
    send("Shut");
    CHECK(s.matched() == 4);
    send("S");  // a letter out of turn leaves the match unchanged
    CHECK(s.matched() == 4);
    s.port_write(0x8900, 2, 0x4164);  // 16-bit: compared whole, not 'd': restarts
    CHECK(s.matched() == 0);
    send("SShutdow");  // the second 'S' is out of turn and ignored
    CHECK(s.matched() == 7);
    CHECK(run_after(m).reason == StopReason::kHalt);
    s.port_write(0x8900, 2, 'n');  // a 16-bit 0x006E is 'n'
    const RunResult r = run_after(m);
    CHECK(r.reason == StopReason::kGuestExit);
    CHECK(r.exit_code == 0);
    CHECK(s.matched() == 0);
    CHECK(s.port_read(0x8900, 1) == 0xFF);
    CHECK(s.port_read(0x8900, 2) == 0xFFFF);
}

TEST_CASE("8259A stub: ICW1 clears the IMR, the ICW sequence follows SNGL and IC4", "[devices]") {
    Pic8259 p(Pic8259::kMasterBase);
    p.port_write(0x21, 1, 0xAA);
    CHECK(p.port_read(0x21, 1) == 0xAA);
    p.port_write(0x20, 1, 0x13);  // ICW1: single, ICW4 needed
    CHECK(p.port_read(0x21, 1) == 0x00);
    CHECK(p.initializing());
    p.port_write(0x21, 1, 0x08 | 0x05);  // ICW2: bits 2-0 are not part of the base
    CHECK(p.vector_base() == 0x08);
    CHECK(p.initializing());
    p.port_write(0x21, 1, 0x01);  // ICW4 (no ICW3 in single mode)
    CHECK_FALSE(p.initializing());
    p.port_write(0x21, 1, 0x7F);
    CHECK(p.imr() == 0x7F);
    p.port_write(0x20, 1, 0x20);  // OCW2: non-specific EOI
    p.port_write(0x20, 1, 0x0C);  // OCW3: poll
    CHECK(p.port_read(0x20, 1) == 0x00);
    CHECK(p.imr() == 0x7F);

    p.port_write(0x20, 1, 0x10);  // ICW1: cascade, no ICW4
    p.port_write(0x21, 1, 0x70);  // ICW2
    p.port_write(0x21, 1, 0x04);  // ICW3
    CHECK_FALSE(p.initializing());
    p.port_write(0x21, 1, 0x3C);  // OCW1
    CHECK(p.imr() == 0x3C);
    CHECK(p.vector_base() == 0x70);
}

TEST_CASE("8254 stub accepts writes and reads 0", "[devices]") {
    Pit8254 t;
    for (u16 port = 0x40; port <= 0x43; ++port) {
        t.port_write(port, 1, 0xFF);
        CHECK(t.port_read(port, 1) == 0);
    }
    CHECK(t.writes() == 4);
}

TEST_CASE("port 92h stores only the A20 bit, and bit 0 resets", "[devices]") {
    auto mp = halting_machine();
    Machine& m = *mp;
    Port92 p;
    p.attach(m);
    CHECK(p.port_read(0x92, 1) == 0x00);
    CHECK_FALSE(p.a20_enabled());
    p.port_write(0x92, 1, 0xFE);
    CHECK(p.port_read(0x92, 1) == 0x02);
    CHECK(run_after(m).reason == StopReason::kHalt);
    p.port_write(0x92, 1, 0x01);
    CHECK(p.port_read(0x92, 1) == 0x00);
    const RunResult r = run_after(m);
    CHECK(r.reason == StopReason::kGuestExit);
    CHECK(r.exit_code == 0);
    CHECK(r.message == "system reset via port 92h");
}

TEST_CASE("CMOS: the fixed time in BCD, binary and 12-hour formats", "[devices]") {
    CmosRtc c;
    // Friday 2024-03-15 13:45:30, BCD, 24-hour.
    const u8 bcd[] = {0x30, 0x00, 0x45, 0x00, 0x13, 0x00, 0x06, 0x15, 0x03, 0x24};
    for (u8 i = 0; i < 10; ++i) {
        INFO("register " << int(i));
        CHECK(c.read_register(i) == bcd[i]);
    }
    CHECK(c.read_register(CmosRtc::kRegA) == 0x26);
    CHECK(c.read_register(CmosRtc::kRegB) == 0x02);
    CHECK(c.read_register(CmosRtc::kRegC) == 0x00);
    CHECK(c.read_register(CmosRtc::kRegD) == 0x80);
    CHECK(c.read_register(CmosRtc::kCentury) == 0x20);
    CHECK(c.read_register(0x0E) == 0x00);
    CHECK(c.read_register(0x7F) == 0x00);

    SECTION("binary mode (DM = 1)") {
        c.write_register(CmosRtc::kRegB, 0x06);
        CHECK(c.read_register(CmosRtc::kSeconds) == 30);
        CHECK(c.read_register(CmosRtc::kMinutes) == 45);
        CHECK(c.read_register(CmosRtc::kHours) == 13);
        CHECK(c.read_register(CmosRtc::kYear) == 24);
    }
    SECTION("12-hour mode: 13 h is 1 PM") {
        c.write_register(CmosRtc::kRegB, 0x00);
        CHECK(c.read_register(CmosRtc::kHours) == 0x81);
        c.write_register(CmosRtc::kRegB, 0x04);
        CHECK(c.read_register(CmosRtc::kHours) == 0x81);
    }
    SECTION("the time and registers C and D ignore writes; alarms and A store") {
        for (u8 i = 0; i < 10; ++i) c.write_register(i, 0x59);
        c.write_register(CmosRtc::kRegC, 0xFF);
        c.write_register(CmosRtc::kRegD, 0x00);
        c.write_register(CmosRtc::kRegA, 0xAF);
        CHECK(c.read_register(CmosRtc::kSeconds) == 0x30);
        CHECK(c.read_register(CmosRtc::kSecondsAlarm) == 0x59);
        CHECK(c.read_register(CmosRtc::kMinutesAlarm) == 0x59);
        CHECK(c.read_register(CmosRtc::kHoursAlarm) == 0x59);
        CHECK(c.read_register(CmosRtc::kDayOfWeek) == 0x06);
        CHECK(c.read_register(CmosRtc::kRegA) == 0x2F);  // UIP reads 0
        CHECK(c.read_register(CmosRtc::kRegC) == 0x00);
        CHECK(c.read_register(CmosRtc::kRegD) == 0x80);
    }
    SECTION("ports: 0x70 is write-only, 0x71 follows the index") {
        c.port_write(0x70, 1, 0x87);
        CHECK(c.index() == 0x07);
        CHECK(c.port_read(0x70, 1) == 0xFF);
        CHECK(c.port_read(0x71, 1) == 0x15);
        c.port_write(0x70, 1, 0x7F);
        c.port_write(0x71, 1, 0x42);
        CHECK(c.read_register(0x7F) == 0x42);
    }
}

TEST_CASE("fw_cfg: selection, offsets, unknown keys and access sizes", "[devices]") {
    FwCfg f;
    auto read = [&](unsigned n) {
        std::string s;
        for (unsigned i = 0; i < n; ++i) s.push_back(char(f.port_read(0x511, 1)));
        return s;
    };
    CHECK(read(4) == "QEMU");  // the signature is selected at reset
    CHECK(read(1) == std::string(1, '\0'));
    f.port_write(0x510, 2, FwCfg::kWriteChannel | FwCfg::kSignature);  // bit 14 ignored
    CHECK(read(2) == "QE");
    f.port_write(0x510, 2, 0x0001);
    CHECK(f.port_read(0x511, 2) == 0);  // not a byte access: 0, offset unchanged
    CHECK(read(4) == std::string("\x01\0\0\0", 4));
    f.port_write(0x510, 2, FwCfg::kArchLocal | FwCfg::kSignature);  // no arch items
    CHECK(read(1) == std::string(1, '\0'));
    f.port_write(0x511, 1, 'x');     // data writes are ignored
    f.port_write(0x510, 4, 0x0005);  // a 32-bit write does not select
    CHECK(read(1) == std::string(1, '\0'));
    f.port_write(0x511, 2, 0x0005);  // a 16-bit write selects at either port
    CHECK(read(3) == std::string("\x01\0\0", 3));
    CHECK(f.port_read(0x510, 1) == 0);  // a byte read at 0x510 reads data too (QEMU's comb region)
    f.add_bytes(0x0019, {1, 2});
    f.select(0x0019);
    CHECK(f.port_read(0x510, 1) == 1);
    CHECK(f.port_read(0x511, 1) == 2);
}

TEST_CASE("VGA text memory: little-endian accesses and line rendering", "[devices]") {
    VgaTextMemory v;
    CHECK(v.mmio_read(0, 2) == 0x0720);
    CHECK_FALSE(v.written());
    v.mmio_write(0, 8, 0x0720'0000'0742'0741ull);  // 'A', 'B', NUL (blank glyph), ' '
    v.mmio_write(8, 1, 'C');
    CHECK(v.written());
    CHECK(v.mmio_read(0, 8) == 0x0720'0000'0742'0741ull);
    const u64 last = (24 * 80 + 79) * 2;
    v.mmio_write(last, 2, 0x0700 | 'Z');
    v.mmio_write(VgaTextMemory::kSize - 1, 1, 0x55);  // beyond the first page: stored, not shown
    CHECK(v.mmio_read(VgaTextMemory::kSize - 2, 2) == 0x5520);
    const auto lines = v.lines();
    REQUIRE(lines.size() == 25);
    CHECK(lines[0] == "AB  C");
    CHECK(lines[24] == std::string(79, ' ') + "Z");
    for (unsigned r = 1; r < 24; ++r) CHECK(lines[r].empty());
}

TEST_CASE("standard devices claim their addresses once and leave others unclaimed", "[devices]") {
    Machine m;
    StandardDevices d;
    d.attach(m);
    CHECK(m.port_bus().read(0xE9, 1) == 0xE9);
    CHECK(m.port_bus().read(0x3FD, 1) == 0x60);
    CHECK(m.port_bus().read(0x21, 1) == 0x00);
    CHECK(m.port_bus().read(0x3F0, 1) == 0xFF);  // nothing at 0x3F0
    CHECK(m.port_bus().read(0xF8, 1) == 0xFF);   // isa-debug-exit ends at 0xF7
    CHECK(m.memory_bus().read(0xB8000, 2) == 0x0720);
    CHECK_FALSE(m.memory_bus().page_is_ram(0xB8));
    CHECK_FALSE(m.memory_bus().page_is_ram(0xBF));
    CHECK(m.memory_bus().page_is_ram(0xB7));
    CHECK(m.memory_bus().page_is_ram(0xC0));
    StandardDevices again;
    CHECK_THROWS_AS(again.attach(m), BusConflict);
}
