// Captures the arithmetic flags an x86-64 host processor produces for instructions whose
// flags the SDM leaves partly undefined. Not built by CMake; run it on real hardware:
//   gcc -O1 -o capture tests/data/capture_flags.c && ./capture > flags.txt
// Each line: mnemonic operands... flags_in flags_out (RFLAGS & OF|SF|ZF|AF|PF|CF).
// tests/data/intel_xeon_flags.txt is a sample of its output on an
// "Intel(R) Xeon(R) Processor @ 2.50GHz"; tests/test_observed_flags.cpp replays it.
#include <stdio.h>
#include <stdint.h>
#define FL 0x8D5 /* OF SF ZF AF PF CF */
static uint64_t run_shl8(uint8_t a, uint8_t c, uint64_t fin){ uint64_t f; __asm__ volatile("push %3; popfq; shlb %%cl, %b0; pushfq; pop %1" : "+q"(a), "=r"(f) : "c"(c), "r"(fin) : "cc"); return f & FL; }
static uint64_t run_shr8(uint8_t a, uint8_t c, uint64_t fin){ uint64_t f; __asm__ volatile("push %3; popfq; shrb %%cl, %b0; pushfq; pop %1" : "+q"(a), "=r"(f) : "c"(c), "r"(fin) : "cc"); return f & FL; }
static uint64_t run_sar8(uint8_t a, uint8_t c, uint64_t fin){ uint64_t f; __asm__ volatile("push %3; popfq; sarb %%cl, %b0; pushfq; pop %1" : "+q"(a), "=r"(f) : "c"(c), "r"(fin) : "cc"); return f & FL; }
static uint64_t run_rol8(uint8_t a, uint8_t c, uint64_t fin){ uint64_t f; __asm__ volatile("push %3; popfq; rolb %%cl, %b0; pushfq; pop %1" : "+q"(a), "=r"(f) : "c"(c), "r"(fin) : "cc"); return f & FL; }
static uint64_t run_ror8(uint8_t a, uint8_t c, uint64_t fin){ uint64_t f; __asm__ volatile("push %3; popfq; rorb %%cl, %b0; pushfq; pop %1" : "+q"(a), "=r"(f) : "c"(c), "r"(fin) : "cc"); return f & FL; }
static uint64_t run_rcl8(uint8_t a, uint8_t c, uint64_t fin){ uint64_t f; __asm__ volatile("push %3; popfq; rclb %%cl, %b0; pushfq; pop %1" : "+q"(a), "=r"(f) : "c"(c), "r"(fin) : "cc"); return f & FL; }
static uint64_t run_rcr8(uint8_t a, uint8_t c, uint64_t fin){ uint64_t f; __asm__ volatile("push %3; popfq; rcrb %%cl, %b0; pushfq; pop %1" : "+q"(a), "=r"(f) : "c"(c), "r"(fin) : "cc"); return f & FL; }
static uint64_t run_mul8(uint8_t a, uint8_t b, uint64_t fin){ uint64_t f; uint16_t ax=a; __asm__ volatile("push %3; popfq; mulb %b2; pushfq; pop %1" : "+a"(ax), "=r"(f) : "q"(b), "r"(fin) : "cc"); return f & FL; }
static uint64_t run_imul8(uint8_t a, uint8_t b, uint64_t fin){ uint64_t f; uint16_t ax=a; __asm__ volatile("push %3; popfq; imulb %b2; pushfq; pop %1" : "+a"(ax), "=r"(f) : "q"(b), "r"(fin) : "cc"); return f & FL; }
static uint64_t run_shld32(uint32_t a, uint32_t b, uint8_t c, uint64_t fin){ uint64_t f; __asm__ volatile("push %4; popfq; shldl %%cl, %2, %0; pushfq; pop %1" : "+r"(a), "=r"(f) : "r"(b), "c"(c), "r"(fin) : "cc"); return f & FL; }
static uint64_t run_shrd32(uint32_t a, uint32_t b, uint8_t c, uint64_t fin){ uint64_t f; __asm__ volatile("push %4; popfq; shrdl %%cl, %2, %0; pushfq; pop %1" : "+r"(a), "=r"(f) : "r"(b), "c"(c), "r"(fin) : "cc"); return f & FL; }
static uint64_t run_bsf(uint32_t a, uint64_t fin){ uint64_t f; uint32_t d=0x5555; __asm__ volatile("push %3; popfq; bsfl %2, %0; pushfq; pop %1" : "+r"(d), "=r"(f) : "r"(a), "r"(fin) : "cc"); return f & FL; }
static uint64_t run_bsr(uint32_t a, uint64_t fin){ uint64_t f; uint32_t d=0x5555; __asm__ volatile("push %3; popfq; bsrl %2, %0; pushfq; pop %1" : "+r"(d), "=r"(f) : "r"(a), "r"(fin) : "cc"); return f & FL; }
static uint64_t run_bt(uint32_t a, uint32_t b, uint64_t fin){ uint64_t f; __asm__ volatile("push %3; popfq; btl %2, %0; pushfq; pop %1" : "+r"(a), "=r"(f) : "r"(b), "r"(fin) : "cc"); return f & FL; }
static uint64_t run_div8(uint16_t ax, uint8_t b, uint64_t fin){ uint64_t f; __asm__ volatile("push %3; popfq; divb %b2; pushfq; pop %1" : "+a"(ax), "=r"(f) : "q"(b), "r"(fin) : "cc"); return f & FL; }
static uint64_t run_and8(uint8_t a, uint8_t b, uint64_t fin){ uint64_t f; __asm__ volatile("push %3; popfq; andb %b2, %b0; pushfq; pop %1" : "+q"(a), "=r"(f) : "q"(b), "r"(fin) : "cc"); return f & FL; }
static uint64_t mul32(uint32_t a, uint32_t b, uint64_t fin){ uint64_t f; uint32_t d; __asm__ volatile("push %4; popfq; mull %3; pushfq; pop %1" : "+a"(a), "=r"(f), "=d"(d) : "r"(b), "r"(fin) : "cc"); return f&FL; }
static uint64_t imul32_2(uint32_t a, uint32_t b, uint64_t fin){ uint64_t f; __asm__ volatile("push %3; popfq; imull %2, %0; pushfq; pop %1" : "+r"(a), "=r"(f) : "r"(b), "r"(fin) : "cc"); return f&FL; }
static uint64_t tz(uint32_t a, uint64_t fin){ uint64_t f; uint32_t d=0x5555; __asm__ volatile("push %3; popfq; tzcntl %2, %0; pushfq; pop %1" : "+r"(d), "=r"(f) : "r"(a), "r"(fin) : "cc"); return f&FL; }
static uint64_t lz(uint32_t a, uint64_t fin){ uint64_t f; uint32_t d=0x5555; __asm__ volatile("push %3; popfq; lzcntl %2, %0; pushfq; pop %1" : "+r"(d), "=r"(f) : "r"(a), "r"(fin) : "cc"); return f&FL; }
static uint64_t rcl16(uint16_t a, uint8_t c, uint64_t fin){ uint64_t f; __asm__ volatile("push %3; popfq; rclw %%cl, %w0; pushfq; pop %1" : "+r"(a), "=r"(f) : "c"(c), "r"(fin) : "cc"); return f & FL; }
static uint64_t rcr16(uint16_t a, uint8_t c, uint64_t fin){ uint64_t f; __asm__ volatile("push %3; popfq; rcrw %%cl, %w0; pushfq; pop %1" : "+r"(a), "=r"(f) : "c"(c), "r"(fin) : "cc"); return f & FL; }
int main(void) {
  unsigned fins[2]={0x2, 0x2|FL};
  for(int fi=0;fi<2;fi++) for(int a=0;a<256;a++) for(int c=0;c<32;c++){
    printf("shl %d %d %u %lu\n", a,c,fins[fi], run_shl8(a,c,fins[fi]));
    printf("shr %d %d %u %lu\n", a,c,fins[fi], run_shr8(a,c,fins[fi]));
    printf("sar %d %d %u %lu\n", a,c,fins[fi], run_sar8(a,c,fins[fi]));
    printf("rol %d %d %u %lu\n", a,c,fins[fi], run_rol8(a,c,fins[fi]));
    printf("ror %d %d %u %lu\n", a,c,fins[fi], run_ror8(a,c,fins[fi]));
    printf("rcl %d %d %u %lu\n", a,c,fins[fi], run_rcl8(a,c,fins[fi]));
    printf("rcr %d %d %u %lu\n", a,c,fins[fi], run_rcr8(a,c,fins[fi]));
  }
  for(int fi=0;fi<2;fi++) for(int a=0;a<256;a++) for(int b=0;b<256;b+=1){
    printf("mul %d %d %u %lu\n", a,b,fins[fi], run_mul8(a,b,fins[fi]));
    printf("imul %d %d %u %lu\n", a,b,fins[fi], run_imul8(a,b,fins[fi]));
    printf("and %d %d %u %lu\n", a,b,fins[fi], run_and8(a,b,fins[fi]));
    if (b) printf("div %d %d %u %lu\n", a,b,fins[fi], run_div8(a,b,fins[fi]));
  }
  unsigned vals[]={0,1,2,3,0x80000000u,0x40000000u,0xC0000000u,0x7FFFFFFFu,0xFFFFFFFFu,0x12345678u,0x20000000u,0x00010000u,0xF0F0F0F0u};
  for(int fi=0;fi<2;fi++) for(int i=0;i<13;i++) for(int j=0;j<13;j++) for(int c=0;c<32;c++){
    printf("shld %u %u %d %u %lu\n", vals[i],vals[j],c,fins[fi], run_shld32(vals[i],vals[j],c,fins[fi]));
    printf("shrd %u %u %d %u %lu\n", vals[i],vals[j],c,fins[fi], run_shrd32(vals[i],vals[j],c,fins[fi]));
  }
  for(int fi=0;fi<2;fi++) for(int i=0;i<13;i++){ printf("bsf %u %u %lu\n", vals[i], fins[fi], run_bsf(vals[i],fins[fi])); printf("bsr %u %u %lu\n", vals[i], fins[fi], run_bsr(vals[i],fins[fi])); for(int j=0;j<32;j++) printf("bt %u %d %u %lu\n", vals[i], j, fins[fi], run_bt(vals[i],j,fins[fi]));}
  {
 unsigned v2[]={0,1,2,3,0x80000000u,0x40000000u,0xC0000000u,0x7FFFFFFFu,0xFFFFFFFFu,0x12345678u,0x10000u,0x8000u,0x100u,0x80u};
 for(int fi=0;fi<2;fi++) for(int i=0;i<14;i++){ for(int j=0;j<14;j++){ printf("mul32 %u %u %u %lu\n",v2[i],v2[j],fins[fi],mul32(v2[i],v2[j],fins[fi])); printf("imul32 %u %u %u %lu\n",v2[i],v2[j],fins[fi],imul32_2(v2[i],v2[j],fins[fi]));}
   printf("tzcnt %u %u %lu\n",v2[i],fins[fi],tz(v2[i],fins[fi])); printf("lzcnt %u %u %lu\n",v2[i],fins[fi],lz(v2[i],fins[fi]));}
 uint16_t w[]={0,1,0x8000,0x4000,0xC000,0x7FFF,0xFFFF,0x1234,0x8001};
 for(int fi=0;fi<2;fi++) for(int i=0;i<9;i++) for(int c=0;c<32;c++){ printf("rcl16 %u %d %u %lu\n",w[i],c,fins[fi],rcl16(w[i],c,fins[fi])); printf("rcr16 %u %d %u %lu\n",w[i],c,fins[fi],rcr16(w[i],c,fins[fi]));}
}
  return 0;
}
