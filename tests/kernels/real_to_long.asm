; pmusim system test kernel: real mode -> protected mode -> PAE paging -> 64-bit
; mode -> ring 3, back to ring 0 with INT and SYSCALL, a #PF and a #GP through
; its own handlers, then HLT with interrupts off.
; Loaded at 0x7C00 and started in real mode at 0000:7C00 (like a boot sector).
; Every handler records what it saw in the results area at RES (see tests/test_system_kernel.cpp).

%define RES        0x500
%define R_RM_INT   RES + 0x00   ; real-mode INT 80h handler marker
%define R_GP_N     RES + 0x08   ; #GP count
%define R_GP_ERR   RES + 0x10   ; #GP error codes (two slots)
%define R_GP_CS    RES + 0x20   ; CS pushed by the #GP (two slots)
%define R_PF_N     RES + 0x30
%define R_PF_CR2   RES + 0x38   ; two slots
%define R_PF_ERR   RES + 0x48   ; two slots
%define R_PF_RSP   RES + 0x58   ; RSP in the #PF handler (IST1 stack)
%define R_I80_N    RES + 0x60
%define R_I80_CS   RES + 0x68
%define R_I80_SS   RES + 0x70
%define R_I80_RSP  RES + 0x78   ; RSP in the INT 80h handler (RSP0 stack)
%define R_SC_N     RES + 0x80
%define R_SC_RCX   RES + 0x88
%define R_SC_R11   RES + 0x90
%define R_SC_CS    RES + 0x98   ; CS inside the SYSCALL handler
%define R_PF_VAL   RES + 0xA0   ; value read after the #PF handler mapped the page
%define R_DONE     RES + 0xA8
%define R_USER_CS  RES + 0xB0   ; CS seen in ring 3

%define PML4  0x10000
%define PDPT  0x11000
%define PD    0x12000
%define PT2M  0x13000           ; 4 KiB page table for 2 MiB..4 MiB
%define TSS   0x8000
%define RSP0  0x9F000
%define IST1  0x9E000
%define USTK  0x3FF000

bits 16
org 0x7C00
start:
    cli
    xor ax, ax
    mov ds, ax
    mov es, ax
    mov ss, ax
    mov sp, 0x7C00
    mov word [0x80 * 4], rm_int80       ; real-mode IVT entry for INT 80h
    mov word [0x80 * 4 + 2], 0
    int 0x80
    lgdt [gdt_desc]
    mov eax, cr0
    or eax, 1
    mov cr0, eax
    jmp 0x08:pm32

rm_int80:
    mov word [R_RM_INT], 0x1234
    iret

bits 32
pm32:
    mov ax, 0x10
    mov ds, ax
    mov es, ax
    mov ss, ax
    mov esp, 0x90000
    mov dword [0x300000], 0xCAFEBABE    ; physical memory the #PF handler will map
    ; Page tables: identity map 0..1 GiB with 2 MiB pages, except 2..4 MiB through a
    ; 4 KiB table where 0x300000 is not present and 0x301000 is supervisor-only.
    mov edi, PML4
    mov ecx, 0x5000 / 4
    xor eax, eax
    rep stosd
    mov dword [PML4], PDPT | 7
    mov dword [PDPT], PD | 7
    mov edi, PD
    mov eax, 0x87                       ; present, writable, user, 2 MiB
    mov ecx, 512
.pd:
    mov [edi], eax
    add eax, 0x200000
    add edi, 8
    loop .pd
    mov dword [PD + 8], PT2M | 7
    mov edi, PT2M
    mov eax, 0x200007
    mov ecx, 512
.pt:
    mov [edi], eax
    add eax, 0x1000
    add edi, 8
    loop .pt
    mov dword [PT2M + 0x100 * 8], 0x300006      ; not present
    mov dword [PT2M + 0x101 * 8], 0x301003      ; supervisor only
    mov eax, cr4
    or eax, 1 << 5                      ; PAE
    mov cr4, eax
    mov eax, PML4
    mov cr3, eax
    mov ecx, 0xC0000080                 ; IA32_EFER: LME | SCE
    rdmsr
    or eax, (1 << 8) | 1
    wrmsr
    mov eax, cr0
    or eax, 1 << 31                     ; PG: IA-32e mode becomes active
    mov cr0, eax
    jmp 0x18:lm64

bits 64
lm64:
    mov ax, 0x20
    mov ds, ax
    mov es, ax
    mov ss, ax
    mov rsp, 0x90000
    ; TSS descriptor (16 bytes at GDT+0x38) and the TSS itself.
    mov rax, TSS
    mov word [gdt + 0x38], 0x67
    mov [gdt + 0x3A], ax
    shr rax, 16
    mov [gdt + 0x3C], al
    mov byte [gdt + 0x3D], 0x89
    mov byte [gdt + 0x3E], 0
    mov [gdt + 0x3F], ah
    mov qword [gdt + 0x40], 0
    mov qword [TSS + 4], RSP0
    mov qword [TSS + 0x24], IST1
    mov word [TSS + 0x66], 0x68         ; no I/O bitmap
    mov ax, 0x38
    ltr ax
    ; IDT gates: vector, handler, type/attribute, IST
    mov edi, 13
    mov rsi, gp_handler
    mov edx, 0x8E
    xor ecx, ecx
    call set_gate
    mov edi, 14
    mov rsi, pf_handler
    mov edx, 0x8E
    mov ecx, 1
    call set_gate
    mov edi, 0x80
    mov rsi, int80_handler
    mov edx, 0xEE                       ; DPL 3: callable from ring 3
    xor ecx, ecx
    call set_gate
    mov edi, 0x81
    mov rsi, exit_handler
    mov edx, 0xEE
    xor ecx, ecx
    call set_gate
    lidt [idt_desc]
    ; SYSCALL: kernel CS 0x18 / SS 0x20; SYSRET to CS 0x33 / SS 0x2B; FMASK clears IF.
    mov ecx, 0xC0000081
    mov eax, 0
    mov edx, 0x00200018
    wrmsr
    mov ecx, 0xC0000082
    mov rax, syscall_entry
    mov rdx, rax
    shr rdx, 32
    wrmsr
    mov ecx, 0xC0000084
    mov eax, 0x200
    xor edx, edx
    wrmsr
    ; A #GP in ring 0: non-canonical address (2-byte instruction skipped by the handler).
    mov rbx, 0x0000800000000000
    mov r15, 2
    mov eax, [rbx]
    ; A #PF in ring 0: not-present page; the handler maps it and the load is retried.
    mov eax, [0x300000]
    mov [R_PF_VAL], rax
    ; Enter ring 3 with IRETQ: SS, RSP, RFLAGS (IF=1), CS, RIP.
    push 0x2B
    push USTK
    push 0x202
    push 0x33
    mov rax, user
    push rax
    iretq

user:
    mov [R_USER_CS], cs
    int 0x80
    syscall
    mov r15, 1
    hlt                                 ; privileged: #GP(0), skipped by the handler
    mov r15, 7
    mov eax, [0x301000]                 ; supervisor page: #PF (U=1, P=1), skipped
    int 0x81

set_gate:                               ; edi = vector, rsi = handler, edx = type, ecx = IST
    shl rdi, 4
    add rdi, idt
    mov [rdi], si
    mov word [rdi + 2], 0x18
    mov [rdi + 4], cl
    mov [rdi + 5], dl
    mov rax, rsi
    shr rax, 16
    mov [rdi + 6], ax
    shr rax, 16
    mov [rdi + 8], eax
    mov dword [rdi + 12], 0
    ret

gp_handler:                             ; frame: error, RIP, CS, RFLAGS, RSP, SS
    mov rax, [R_GP_N]
    mov rbx, [rsp]
    mov [R_GP_ERR + rax * 8], rbx
    mov rbx, [rsp + 16]
    mov [R_GP_CS + rax * 8], rbx
    inc qword [R_GP_N]
    add [rsp + 8], r15                  ; skip the faulting instruction
    add rsp, 8
    iretq

pf_handler:
    mov [R_PF_RSP], rsp
    mov rax, [R_PF_N]
    mov rbx, cr2
    mov [R_PF_CR2 + rax * 8], rbx
    mov rcx, [rsp]
    mov [R_PF_ERR + rax * 8], rcx
    inc qword [R_PF_N]
    cmp rbx, 0x300000
    jne .skip
    or qword [PT2M + 0x100 * 8], 1      ; map the page and retry
    invlpg [rbx]
    jmp .done
.skip:
    add [rsp + 8], r15
.done:
    add rsp, 8
    iretq

int80_handler:
    mov [R_I80_RSP], rsp
    inc qword [R_I80_N]
    mov rax, [rsp + 8]
    mov [R_I80_CS], rax
    mov rax, [rsp + 32]
    mov [R_I80_SS], rax
    iretq

syscall_entry:
    inc qword [R_SC_N]
    mov [R_SC_RCX], rcx
    mov [R_SC_R11], r11
    mov [R_SC_CS], cs
    o64 sysret

exit_handler:
    mov qword [R_DONE], 0x600D
    cli
    hlt

align 8
gdt:
    dq 0
    dq 0x00CF9A000000FFFF               ; 0x08 code32, DPL 0
    dq 0x00CF92000000FFFF               ; 0x10 data, DPL 0
    dq 0x00AF9A000000FFFF               ; 0x18 code64, DPL 0
    dq 0x00CF92000000FFFF               ; 0x20 data, DPL 0 (SYSCALL SS)
    dq 0x00CFF2000000FFFF               ; 0x28 data, DPL 3 (SYSRET SS)
    dq 0x00AFFA000000FFFF               ; 0x30 code64, DPL 3 (SYSRET CS)
    dq 0, 0                             ; 0x38 64-bit TSS, filled at run time
gdt_end:
gdt_desc:
    dw gdt_end - gdt - 1
    dd gdt
idt_desc:
    dw 0x82 * 16 - 1
    dq idt
align 16
idt:
    times 0x82 * 16 db 0
