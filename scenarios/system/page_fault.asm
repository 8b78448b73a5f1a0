; A load from an address the long64 preset does not map (beyond 4 GiB) takes a
; #PF through the program's own handler, which records CR2 and skips the load.
start:
    mov rax, 0x5000000000
load:
    mov ebx, [rax]          ; 2 bytes: 8B 18
    mov ecx, 7
done:
    hlt

pf:                         ; frame: error code, RIP, CS, RFLAGS, RSP, SS
    mov rdx, cr2
    mov rsi, [rsp]          ; error code
    add qword [rsp + 8], 2  ; skip the faulting load
    add rsp, 8
    iretq
