/* target.c — the CPU the generated C is tuned for: vector width and
 * register count (which bound a register block), FMA, cache sizes, cores,
 * and the compiler flags that build the C for it.
 *
 * Named targets are the x86-64 micro-architecture levels, aarch64 (NEON)
 * and generic (plain C, 128-bit vectors assumed, which every SIMD ISA
 * has); their cache sizes are typical values, used only to size blocks.
 * `native` is the host: the level the CPU supports (gcc's cpu detection,
 * which also checks that the OS saves the wide registers) and its caches
 * from sysfs. */
#include "scheduler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif

#define KIB 1024LL
#define MIB (1024LL * 1024LL)

/* Flags every target shares: -fno-math-errno lets the compiler hoist sqrtf;
 * omp simd vectorises sums by reassociation (codegen's O2C_SIMD_SUM). */
#define SPEED "-O3 -fno-math-errno -fopenmp-simd -DONNX2C_OMP_SIMD"

static const sched_target presets[] = {
    /* AVX-512: gcc 12 prefers 256-bit vectors for many -march/-mtune values,
     * which halves the registers a 512-bit block was sized for. FMA: 4
     * cycles on 2 pipes (Skylake-SP to Sapphire Rapids, Zen 5; Zen 4
     * splits a 512-bit FMA in two: 4 chains would do there). A one-row
     * kernel streaming its weights fetches a line per 4 KiB page (scheduler.h:
     * fetch_page; measured on Zen 5 only); the other presets, whose 4-bit
     * decode kernel is bound by its instructions (AVX2: 16 GB/s on Zen 5),
     * fetch every line */
    {"x86-64-v4", "x86-64-v4", 512, 32, true, 4, 2, 48 * KIB, 2 * MIB, 32 * MIB, 0, 4 * KIB,
     "-march=x86-64-v4 -mprefer-vector-width=512 " SPEED, false},
    /* FMA 4 cycles x 2 pipes (Skylake and later, Zen 3 and later; Haswell, Zen 2: 5) */
    {"x86-64-v3", "x86-64-v3", 256, 16, true, 4, 2, 32 * KIB, 512 * KIB, 16 * MIB, 0, 0,
     "-march=x86-64-v3 " SPEED, false},
    /* no FMA: the add's 3-4 cycles on 1-2 pipes */
    {"x86-64-v2", "x86-64-v2", 128, 16, false, 4, 2, 32 * KIB, 256 * KIB, 8 * MIB, 0, 0,
     "-march=x86-64-v2 " SPEED, false},
    /* FMLA 4 cycles x 2 pipes (Cortex-A76 class, Neoverse N1/N2; V1: 4) */
    {"aarch64", "aarch64", 128, 32, true, 4, 2, 64 * KIB, 1 * MIB, 8 * MIB, 0, 0,
     "-march=armv8-a " SPEED, false},
    {"generic", "generic", 128, 16, false, 4, 2, 32 * KIB, 256 * KIB, 4 * MIB, 0, 0, SPEED, false},
};

static const sched_target *preset(const char *isa) {
  for (size_t i = 0; i < sizeof presets / sizeof *presets; i++)
    if (!strcmp(presets[i].isa, isa)) return &presets[i];
  return NULL;
}

/* The micro-architecture level of the host. */
static const char *host_isa(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    return "x86-64-v4";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "x86-64-v3";
  if (__builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("popcnt")) return "x86-64-v2";
  return "generic";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "generic";
#endif
}

/* A sysfs size such as "48K" or "2048K" in bytes (0 when unreadable). */
static int64_t read_size(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char s[64] = {0};
  char *ok = fgets(s, sizeof s, f);
  fclose(f);
  if (!ok) return 0;
  char *end;
  long long v = strtoll(s, &end, 10);
  if (v <= 0 || v > (1LL << 40)) return 0;
  return *end == 'K' ? v * KIB : *end == 'M' ? v * MIB : *end == 'G' ? v * 1024 * MIB : v;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* The data caches from cpuid, for hosts without sysfs cache entries (a VM
 * may not expose them: the Zen 5 EPYC guest this was written on has no
 * /sys/devices/system/cpu/cpu0/cache, and the x86-64-v4 preset's 2 MiB L2
 * stood for its 1 MiB). First the deterministic cache leaf (4 on Intel,
 * 0x8000001D on AMD), whose level i entry is ways x partitions x line x
 * sets; else AMD's legacy leaves 0x80000005 (L1d KiB in ECX[31:24]) and
 * 0x80000006 (L2 KiB in ECX[31:16], L3 in 512 KiB units in EDX[31:18]). */
static void cpuid_caches(sched_target *t) {
  unsigned a, b, c, d, maxext;
  if (!__get_cpuid(0x80000000, &maxext, &b, &c, &d)) maxext = 0;
  unsigned leaves[2] = {4, 0x8000001D};
  int found = 0;
  for (int l = 0; l < 2 && !found; l++) {
    unsigned leaf = leaves[l], max = leaf < 0x80000000 ? __get_cpuid_max(0, NULL) : maxext;
    if (max < leaf) continue;
    for (unsigned i = 0; i < 16; i++) {
      __cpuid_count(leaf, i, a, b, c, d);
      unsigned type = a & 31, level = (a >> 5) & 7;
      if (!type) break;
      if (type == 2) continue; /* an instruction cache */
      int64_t size = (int64_t)((b >> 22) + 1) * (((b >> 12) & 1023) + 1) * ((b & 4095) + 1) * ((int64_t)c + 1);
      if (level == 1) t->l1d = size;
      else if (level == 2) t->l2 = size;
      else if (level == 3) t->l3 = size;
      found = 1;
    }
  }
  if (found || maxext < 0x80000006) return;
  __cpuid(0x80000005, a, b, c, d);
  if (c >> 24) t->l1d = (int64_t)(c >> 24) * KIB;
  __cpuid(0x80000006, a, b, c, d);
  if (c >> 16) t->l2 = (int64_t)(c >> 16) * KIB;
  if (d >> 18) t->l3 = (int64_t)(d >> 18) * 512 * KIB;
}
#endif

/* The host's data caches, from /sys/devices/system/cpu/cpu0/cache/index*
 * (levels 1-3; an instruction cache is skipped), else (x86) from cpuid.
 * Missing entries keep the preset's value. */
static void host_caches(sched_target *t) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (access("/sys/devices/system/cpu/cpu0/cache/index0/size", R_OK)) {
    cpuid_caches(t);
    return;
  }
#endif
  for (int i = 0; i < 16; i++) {
    char p[128], type[32] = {0};
    snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
    FILE *f = fopen(p, "r");
    if (!f) break;
    char *ok = fgets(type, sizeof type, f);
    fclose(f);
    if (!ok || !strncmp(type, "Instruction", 11)) continue;
    snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    int64_t level = read_size(p);
    snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    int64_t size = read_size(p);
    if (!size) continue;
    if (level == 1) t->l1d = size;
    else if (level == 2) t->l2 = size;
    else if (level == 3) t->l3 = size;
  }
}

int sched_target_get(const char *name, sched_target *t, char *err, size_t errlen) {
  if (!strcmp(name, "native")) {
    *t = *preset(host_isa());
    snprintf(t->name, sizeof t->name, "native");
    host_caches(t);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    t->cores = n > 0 && n < 1 << 20 ? (int)n : 0;
    /* -march=native: every extension of the host, tuned for it */
    snprintf(t->cflags, sizeof t->cflags, "-march=native%s %s",
             t->vector_bits == 512 ? " -mprefer-vector-width=512" : "", SPEED);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    t->dot_u8s8 = t->vector_bits == 512 && __builtin_cpu_supports("avx512vnni");
#endif
    return 0;
  }
  const sched_target *s = preset(name);
  if (!s) {
    snprintf(err, errlen,
             "unknown target '%.64s' (native, x86-64-v2, x86-64-v3, x86-64-v4, aarch64, generic)",
             name);
    return -1;
  }
  *t = *s;
  return 0;
}

int sched_target_lanes(const sched_target *t) {
  return t->vector_bits >= 32 ? t->vector_bits / 32 : 1;
}

int sched_target_chains(const sched_target *t) {
  int n = t->fma_latency * t->fma_pipes;
  return n > 0 ? n : 1;
}

void sched_target_describe(const sched_target *t, char *buf, size_t n) {
  char cores[32] = "";
  if (t->cores) snprintf(cores, sizeof cores, ", %d cores", t->cores);
  snprintf(buf, n, "%s%s%s%s: %d x %d-bit vector registers%s%s; L1d %lld KiB, L2 %lld KiB, L3 %lld KiB%s",
           t->name, strcmp(t->name, t->isa) ? " (" : "", strcmp(t->name, t->isa) ? t->isa : "",
           strcmp(t->name, t->isa) ? ")" : "", t->vector_regs, t->vector_bits,
           t->fma ? ", FMA" : ", no FMA", t->dot_u8s8 ? ", VNNI" : "", (long long)(t->l1d / KIB), (long long)(t->l2 / KIB),
           (long long)(t->l3 / KIB), cores);
}
