// bench/bf16_dot_rate.cc — one core's issue rate of zmm vdpbf16ps (32 bf16 products) against
// zmm vfmadd231ps (16 fp32 products), 16 independent accumulators each: whether AVX512_BF16 has
// a compute advantage over fp32 FMAs on this CPU (the bf16 Attention kernel's premise,
// docs/precision.md "bf16 Attention").   g++ -O2 bench/bf16_dot_rate.cc -o /tmp/rate && /tmp/rate
#include <immintrin.h>
#include <chrono>
#include <cstdio>
template <class F> double run(F f){ auto t0=std::chrono::steady_clock::now(); f(); return std::chrono::duration<double>(std::chrono::steady_clock::now()-t0).count(); }
__attribute__((target("avx512f,avx512bf16"),noinline)) float dp(long n){
  __m512 a[16]; for(int i=0;i<16;++i)a[i]=_mm512_set1_ps(i);
  __m512bh x=(__m512bh)_mm512_set1_epi32(0x3f803f80), y=(__m512bh)_mm512_set1_epi32(0x3f803f81);
  for(long k=0;k<n;++k){
#pragma GCC unroll 16
    for(int i=0;i<16;++i) a[i]=_mm512_dpbf16_ps(a[i],x,y);
    __asm__ volatile("" : "+v"(x));
  }
  __m512 s=a[0]; for(int i=1;i<16;++i)s=_mm512_add_ps(s,a[i]); return _mm512_reduce_add_ps(s);}
__attribute__((target("avx512f,fma"),noinline)) float fm(long n){
  __m512 a[16]; for(int i=0;i<16;++i)a[i]=_mm512_set1_ps(i);
  __m512 x=_mm512_set1_ps(1.0001f), y=_mm512_set1_ps(0.9999f);
  for(long k=0;k<n;++k){
#pragma GCC unroll 16
    for(int i=0;i<16;++i) a[i]=_mm512_fmadd_ps(x,y,a[i]);
    __asm__ volatile("" : "+v"(x));
  }
  __m512 s=a[0]; for(int i=1;i<16;++i)s=_mm512_add_ps(s,a[i]); return _mm512_reduce_add_ps(s);}
int main(){ long n=50000000; float r=0; for(int t=0;t<3;++t){
 double a=run([&]{r+=dp(n);}), b=run([&]{r+=fm(n);});
 printf("dpbf16 %.3f ns/instr (%.1f GF/s)  fma %.3f ns/instr (%.1f GF/s)  ratio dp/fma time %.2f\n", a/(16.0*n)*1e9, 16.0*n*64/a/1e9, b/(16.0*n)*1e9, 16.0*n*32/b/1e9, a/b);} return r==1234.5f;}
