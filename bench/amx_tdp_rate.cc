// bench/amx_tdp_rate.cc — one core's AMX tile-product rate with the tiles in registers (no loads)
// and with four 1 KB tile loads from L1 per four products: the hardware's TDPBF16PS ceiling that
// bf16 GEMMs are judged against (bench/RESULTS.md: ~7 ns per 16x16x32 product, ~2.3 TFLOP/s
// per core on the AMX Xeon, loads from L1 free).
//   g++ -O2 bench/amx_tdp_rate.cc -o /tmp/tdp && /tmp/tdp
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdint>
#define T __attribute__((target("avx512f,amx-tile,amx-bf16")))
struct alignas(64) TileCfg { uint8_t palette = 1, start = 0, r[14] = {}; uint16_t colsb[16] = {}; uint8_t rows[16] = {}; };
T void cfg() { TileCfg c; for (int i = 0; i < 8; ++i) { c.colsb[i] = 64; c.rows[i] = 16; } _tile_loadconfig(&c); }
alignas(64) static uint16_t buf[8][512];
T double run(long n, int mode) {
  cfg(); for(int i=0;i<512;++i) for(int t=0;t<8;++t) buf[t][i]=0x3f80;
  _tile_zero(0);_tile_zero(1);_tile_zero(2);_tile_zero(3);
  _tile_loadd(4,buf[4],64);_tile_loadd(5,buf[5],64);_tile_loadd(6,buf[6],64);_tile_loadd(7,buf[7],64);
  auto t0=std::chrono::steady_clock::now();
  for(long k=0;k<n;++k){
    if(mode){ _tile_loadd(4,buf[4],64);_tile_loadd(5,buf[5],64);_tile_loadd(6,buf[6],64);_tile_loadd(7,buf[7],64);}
    _tile_dpbf16ps(0,4,6);_tile_dpbf16ps(1,4,7);_tile_dpbf16ps(2,5,6);_tile_dpbf16ps(3,5,7);
  }
  double s=std::chrono::duration<double>(std::chrono::steady_clock::now()-t0).count();
  _tile_stored(0,buf[0],64); _tile_release(); return s;
}
int main(){
  if(syscall(SYS_arch_prctl,0x1023,18)) { printf("no amx perm\n"); return 1; }
  long n=2000000;
  for(int r=0;r<3;++r) for(int mode=0;mode<2;++mode){ double s=run(n,mode); double tdps=4.0*n; printf("mode %d (%s): %.2f ns/TDP, %.0f GFLOP/s one core\n",mode,mode?"4 L1 tile loads per 4 TDP":"no loads",s/tdps*1e9, tdps*16384/s/1e9);}
}
