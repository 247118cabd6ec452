#!/usr/bin/env python3
"""kernel_prof.py - times every kernel call site of a generated file.

  kernel_prof.py patch IN.c OUT.c NAME   OUT.c: IN.c with a TSC read around
                                         every kernel call in NAME_run; the
                                         per-site cycles of each call go to
                                         the file named by $O2C_KPROF at exit
                                         (every call, the harness's warm-up
                                         runs too)
  kernel_prof.py summary [--top N] OUT.c.sites PROF...
                                         per call site: median and minimum
                                         TSC cycles over the calls, the kernel
                                         and its comment; sums at the end

Build OUT.c as the bench builds NAME.c (its first lines name the flags)
with common/harness.c, and run that harness (e.g. --runs 200). Why: the
bench reports medians of whole calls; where the time of a call goes (which
layer, which copy) needs the same statistic per kernel, and the per-kernel
minima of earlier analyses hid what the medians showed (bench/README,
"ResNet-18 at 2 threads: medians against minima"). x86 only (rdtsc); the
read costs ~20 cycles a site."""
import re
import statistics
import sys

PROF_C = r'''
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>
/* kernel_prof.py: cycles per call site per call of the run function */
#define O2C_KP_SITES %d
#define O2C_KP_CALLS 4096
static unsigned long long o2c_kp[O2C_KP_CALLS][O2C_KP_SITES];
static long o2c_kp_call = -1;
__attribute__((destructor)) static void o2c_kp_dump(void) {
  const char *p = getenv("O2C_KPROF");
  FILE *f = p ? fopen(p, "w") : NULL;
  if (!f) return;
  long n = o2c_kp_call + 1 < O2C_KP_CALLS ? o2c_kp_call + 1 : O2C_KP_CALLS;
  for (long c = 0; c < n; c++) {
    for (int s = 0; s < O2C_KP_SITES; s++) fprintf(f, "%%s%%llu", s ? " " : "", o2c_kp[c][s]);
    fputc('\n', f);
  }
  fclose(f);
}
#define O2C_KP(site, call) do { unsigned long long o2c_t0 = __rdtsc(); call; \
  if (o2c_kp_call >= 0 && o2c_kp_call < O2C_KP_CALLS) o2c_kp[o2c_kp_call][site] += __rdtsc() - o2c_t0; } while (0)
'''

CALL = re.compile(r'^(\s+)((?:err \|= )?k\d+\(.*\));(\s*/\*.*\*/)?\s*$')
CHECKED = re.compile(r'^(\s+)if \((k\d+\(.*\))\) (return [^;]*;)(\s*/\*.*\*/)?\s*$')


def patch(src, dst, name):
    lines = open(src).read().split('\n')
    out, sites, inside = [], [], False
    # the kernels' calls: in NAME_run, or with threads in NAME_run_kernels
    # (NAME_run then times whole calls around it: codegen/pool_calls.c)
    fn = re.compile(r'^int %s_run\(' % re.escape(name))
    if any(re.match(r'^static int %s_run_kernels\(' % re.escape(name), ln) for ln in lines):
        fn = re.compile(r'^static int %s_run_kernels\(' % re.escape(name))
    for ln in lines:
        if fn.match(ln):
            inside = True
            out.append(ln)
            out.append('  o2c_kp_call++;')
            continue
        if inside and ln.startswith('}'):
            inside = False
        m = CALL.match(ln) if inside else None
        c = CHECKED.match(ln) if inside else None
        if not (m or c):
            out.append(ln)
            continue
        indent, call, comment = (m.group(1), m.group(2), m.group(3)) if m else (c.group(1), c.group(2), c.group(4))
        comment = comment or ''
        sites.append((re.search(r'k\d+', call).group(0), comment.strip()))
        site = len(sites) - 1
        if m:  # a call whose status is ignored or OR-ed into err
            out.append('%sO2C_KP(%d, %s);%s' % (indent, site, call, comment))
        else:  # if (kN(..)) return ERR;
            out.append('%s{ int o2c_e; O2C_KP(%d, o2c_e = %s); if (o2c_e) %s }%s' %
                       (indent, site, call, c.group(3), comment))
    if not sites:
        sys.exit('kernel_prof: no kernel call found in %s_run' % name)
    text = '\n'.join(out)
    first = text.index('\n#include')
    text = text[:first] + '\n' + (PROF_C % len(sites)) + text[first:]
    open(dst, 'w').write(text)
    open(dst + '.sites', 'w').write(''.join('%s %s\n' % s for s in sites))
    print('kernel_prof: %d call sites' % len(sites))


def summary(sites_path, paths, top):
    sites = [ln.rstrip('\n').split(' ', 1) + [''] for ln in open(sites_path)]
    for p in paths:
        rows = [list(map(int, ln.split())) for ln in open(p) if ln.strip()]
        n = len(rows[0])
        if n != len(sites):
            sys.exit('kernel_prof: %s has %d sites, %s %d' % (p, n, sites_path, len(sites)))
        med = [statistics.median(r[s] for r in rows) for s in range(n)]
        mn = [min(r[s] for r in rows) for s in range(n)]
        tot = [sum(r) for r in rows]
        print('%s: %d calls, total cycles p50 %.0f min %.0f; sum of site p50 %.0f, of minima %.0f' %
              (p, len(rows), statistics.median(tot), min(tot), sum(med), sum(mn)))
        order = sorted(range(n), key=lambda s: -med[s])[:top]
        for s in order:
            print('  site %3d  p50 %10.0f  min %10.0f  %-5s %s' % (s, med[s], mn[s], sites[s][0], sites[s][1][:70]))


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == 'patch':
        patch(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) >= 4 and sys.argv[1] == 'summary':
        args, top = sys.argv[2:], 40
        if args[0] == '--top':
            top, args = int(args[1]), args[2:]
        summary(args[0], args[1:], top)
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
