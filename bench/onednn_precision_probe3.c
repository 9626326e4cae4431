// bench/onednn_precision_probe3.c — the primitives of bench/onednn_precision_probe.cc (f32, bf16
// and u8 x s8 matmuls / convolutions, f32 destination, median of 25 runs) on oneDNN 3.x through
// its C API, for the PyPI wheel onednn-cpu-gomp, which ships libdnnl.so.3 without headers. It
// declares only what it calls, with the v3 values of the few enums it uses (data types, format
// tags, queries, argument ids); a wrong value shows as a failed primitive or a wrong impl name.
// Nothing of it is linked into ferry (docs/precision.md, "which oneDNN").
//   pip download --no-deps onednn-cpu-gomp==2023.2.0 -d /tmp/w && unzip -q -d /tmp/w /tmp/w/*.whl
//   L=/tmp/w/onednn_cpu_gomp-2023.2.0.data/data/lib
//   gcc -O2 -mf16c -fopenmp bench/onednn_precision_probe3.c -L$L -l:libdnnl.so.3 -Wl,-rpath,$L -o /tmp/probe3
//   OMP_NUM_THREADS=2 OMP_WAIT_POLICY=ACTIVE /tmp/probe3
// Compare it with the 2.6 probe in the same quiet window (cpu-excl), both with the same
// OMP_WAIT_POLICY: beside another busy process, an execute waits a scheduler tick (~8 ms) for
// its second thread whatever the work.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <immintrin.h>
typedef void *eng_t, *strm_t, *md_t, *pd_t, *prim_t, *mem_t, *attr_t;
typedef int64_t dims_t[12];
typedef struct { int arg; mem_t memory; } exec_arg_t;
typedef struct { int major, minor, patch; const char *hash; unsigned cpu_runtime, gpu_runtime; } version_t;
enum { F16 = 1, BF16 = 2, F32 = 3, S32 = 4, S8 = 5, U8 = 6 };
enum { TAG_ANY = 1, TAG_A = 2, TAG_AB = 3, TAG_ABCD = 5 };
enum { Q_IMPL_INFO_STR = 8, Q_SRC_MD = 129, Q_WEIGHTS_MD = 131, Q_DST_MD = 133, Q_SCRATCHPAD_MD = 136 };
enum { ARG_SRC = 1, ARG_DST = 17, ARG_WEIGHTS = 33, ARG_SCRATCHPAD = 80 };
int dnnl_engine_create(eng_t *, int, size_t);
int dnnl_stream_create(strm_t *, eng_t, unsigned);
int dnnl_memory_desc_create_with_tag(md_t *, int, const dims_t, int, int);
int dnnl_matmul_primitive_desc_create(pd_t *, eng_t, md_t, md_t, md_t, md_t, attr_t);
int dnnl_convolution_forward_primitive_desc_create(pd_t *, eng_t, int, int, md_t, md_t, md_t, md_t, const int64_t *,
                                                   const int64_t *, const int64_t *, const int64_t *, attr_t);
md_t dnnl_primitive_desc_query_md(pd_t, int, int);
int dnnl_primitive_desc_query(pd_t, int, int, void *);
size_t dnnl_memory_desc_get_size(md_t);
int dnnl_primitive_create(prim_t *, pd_t);
int dnnl_memory_create(mem_t *, md_t, eng_t, void *);
int dnnl_memory_get_data_handle(mem_t, void **);
int dnnl_primitive_execute(prim_t, strm_t, int, const exec_arg_t *);
int dnnl_stream_wait(strm_t);
int dnnl_primitive_attr_create(attr_t *);
int dnnl_primitive_attr_set_scratchpad_mode(attr_t, int);
const version_t *dnnl_version(void);
static eng_t E; static strm_t S;
static double now() { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec * 1e-6; }
static void fill(mem_t m, md_t md, int dt) {
  void *p; dnnl_memory_get_data_handle(m, &p); size_t n = dnnl_memory_desc_get_size(md);
  for (size_t i = 0; i < (dt == F32 ? n / 4 : (dt == BF16 || dt == F16) ? n / 2 : n); ++i) {
    float f = (float)((int)(i % 13) - 6) / 8.f; uint32_t x; memcpy(&x, &f, 4);
    if (dt == F32) ((float *)p)[i] = f; else if (dt == BF16) ((uint16_t *)p)[i] = x >> 16;
    else if (dt == F16) ((uint16_t *)p)[i] = _cvtss_sh(f, 0); else ((uint8_t *)p)[i] = i % 13;
  }
}
static double run(pd_t pd, int wdt, int sdt, const char **impl) {
  prim_t pr; if (dnnl_primitive_create(&pr, pd)) return -1;
  md_t smd = dnnl_primitive_desc_query_md(pd, Q_SRC_MD, 0), wmd = dnnl_primitive_desc_query_md(pd, Q_WEIGHTS_MD, 0),
       dmd = dnnl_primitive_desc_query_md(pd, Q_DST_MD, 0), spm = dnnl_primitive_desc_query_md(pd, Q_SCRATCHPAD_MD, 0);
  mem_t ms, mw, md, mp = 0; void *ALLOC = (void *)(size_t)-1;
  dnnl_memory_create(&ms, smd, E, ALLOC); dnnl_memory_create(&mw, wmd, E, ALLOC); dnnl_memory_create(&md, dmd, E, ALLOC);
  fill(ms, smd, sdt); fill(mw, wmd, wdt);
  exec_arg_t a[4] = {{ARG_SRC, ms}, {ARG_WEIGHTS, mw}, {ARG_DST, md}}; int na = 3;
  if (spm && dnnl_memory_desc_get_size(spm)) { dnnl_memory_create(&mp, spm, E, ALLOC); a[na].arg = ARG_SCRATCHPAD; a[na++].memory = mp; }
  dnnl_primitive_desc_query(pd, Q_IMPL_INFO_STR, 0, (void *)impl);
  double t[30];
  for (int i = 0; i < 3; ++i) {
    if (dnnl_primitive_execute(pr, S, na, a)) return -1;
    dnnl_stream_wait(S);
  }
  for (int i = 0; i < 25; ++i) {
    double t0 = now();
    dnnl_primitive_execute(pr, S, na, a);
    dnnl_stream_wait(S);
    t[i] = now() - t0;
  }
  for (int i = 0; i < 25; ++i) for (int j = i + 1; j < 25; ++j) if (t[j] < t[i]) { double x = t[i]; t[i] = t[j]; t[j] = x; }
  return t[12];
}
static attr_t user_scratch() { attr_t a; dnnl_primitive_attr_create(&a); dnnl_primitive_attr_set_scratchpad_mode(a, 1); return a; }
static double mm(int64_t m, int64_t k, int64_t n, int dt, const char **impl) {
  int wdt = dt == U8 ? S8 : dt; md_t a, b, c; dims_t da = {m, k}, db = {k, n}, dc = {m, n};
  dnnl_memory_desc_create_with_tag(&a, 2, da, dt, TAG_AB); dnnl_memory_desc_create_with_tag(&b, 2, db, wdt, TAG_ANY);
  dnnl_memory_desc_create_with_tag(&c, 2, dc, F32, TAG_AB);
  pd_t pd; if (dnnl_matmul_primitive_desc_create(&pd, E, a, b, NULL, c, user_scratch())) { *impl = "none"; return -1; }
  return run(pd, wdt, dt, impl);
}
static double cv(int64_t c, int64_t hw, int64_t oc, int64_t k, int64_t s, int64_t g, int dt, const char **impl) {
  int wdt = dt == U8 ? S8 : dt; int64_t pad = k / 2, o = (hw + 2 * pad - k) / s + 1;
  md_t x, w, y; dims_t dx = {1, c, hw, hw}, dy = {1, oc, o, o}, dw = {oc, c, k, k}, dwg = {g, oc / g, c / g, k, k};
  dnnl_memory_desc_create_with_tag(&x, 4, dx, dt, TAG_ANY); dnnl_memory_desc_create_with_tag(&y, 4, dy, F32, TAG_ANY);
  dnnl_memory_desc_create_with_tag(&w, g > 1 ? 5 : 4, g > 1 ? dwg : dw, wdt, TAG_ANY);
  int64_t st[2] = {s, s}, di[2] = {0, 0}, pl[2] = {pad, pad};
  pd_t pd; if (dnnl_convolution_forward_primitive_desc_create(&pd, E, 96, 1, x, w, NULL, y, st, di, pl, pl, user_scratch())) { *impl = "none"; return -1; }
  return run(pd, wdt, dt, impl);
}
int main() {
  const version_t *v = dnnl_version(); printf("oneDNN %d.%d.%d\n", v->major, v->minor, v->patch);
  dnnl_engine_create(&E, 1, 0); dnnl_stream_create(&S, E, 1);
  int64_t M[][3] = {{128, 768, 768}, {128, 768, 3072}, {128, 3072, 768}, {512, 512, 512}, {1, 768, 768}, {1, 2048, 1000}, {32, 768, 3072}, {197, 768, 768}};
  for (int i = 0; i < 8; ++i) {
    const char *i0, *i1, *i2; double f = mm(M[i][0], M[i][1], M[i][2], F32, &i0), b = mm(M[i][0], M[i][1], M[i][2], BF16, &i1), q = mm(M[i][0], M[i][1], M[i][2], U8, &i2);
    printf("matmul %ldx%ldx%ld  f32 %s %.3f | bf16 %s %.3f %.2fx | u8s8 %s %.3f %.2fx\n", (long)M[i][0], (long)M[i][1], (long)M[i][2], i0, f, i1, b, f / b, i2, q, f / q);
  }
  int64_t C[][6] = {{64, 56, 64, 3, 1, 1}, {256, 14, 256, 3, 1, 1}, {64, 56, 256, 1, 1, 1}, {512, 7, 2048, 1, 1, 1}, {3, 224, 64, 7, 2, 1}, {96, 112, 96, 3, 1, 96}, {576, 14, 576, 3, 1, 576}};
  for (int i = 0; i < 7; ++i) {
    const char *i0, *i1, *i2; int64_t *s = C[i];
    double f = cv(s[0], s[1], s[2], s[3], s[4], s[5], F32, &i0), b = cv(s[0], s[1], s[2], s[3], s[4], s[5], BF16, &i1), q = cv(s[0], s[1], s[2], s[3], s[4], s[5], U8, &i2);
    printf("conv %ldx%ld^2->%ld k%ld s%ld g%ld  f32 %s %.3f | bf16 %s %.3f %.2fx | u8s8 %s %.3f %.2fx\n", (long)s[0], (long)s[1], (long)s[2], (long)s[3], (long)s[4], (long)s[5], i0, f, i1, b, f / b, i2, q, f / q);
  }
  return 0;
}
