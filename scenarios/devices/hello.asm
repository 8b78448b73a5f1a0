; Prints through the Bochs debug console (port E9h) and the 16550 UART (COM1),
; writes to VGA text memory, and exits through QEMU's isa-debug-exit device.
start:
    mov rsi, msg
.console:
    lodsb
    test al, al
    jz .serial
    out 0xE9, al
    jmp .console
.serial:
    mov rsi, msg
    mov dx, 0x3F8
.next:
    lodsb
    test al, al
    jz .screen
    mov bl, al
    add dx, 5                 ; LSR
.wait:
    in al, dx
    test al, 0x20             ; transmitter holding register empty
    jz .wait
    sub dx, 5
    mov al, bl
    out dx, al
    jmp .next
.screen:
    mov rdi, 0xB8000
    mov rsi, msg
    mov ah, 0x07
.cell:
    lodsb
    cmp al, 10
    je .exit
    stosw
    jmp .cell
.exit:
    mov al, 0x10
    out 0xF4, al              ; exit status (0x10 << 1) | 1 = 0x21
    hlt
msg: db "hello from pmusim", 10, 0
