#!/usr/bin/env python3
"""pool_trace.py - traces the thread pool of a generated --threads N file.

  pool_trace.py patch IN.c OUT.c NAME   OUT.c: IN.c with every threaded loop
                                        recorded; the records go to the file
                                        named by $O2C_TRACE at exit
  pool_trace.py summary TRACE...        per process: loops run threaded and
                                        alone, stalls, moves, and per call of
                                        NAME_run the worker's share and the
                                        caller's waits

Build OUT.c as the bench builds NAME.c (its first lines name the flags) with
common/harness.c, and run that harness in place of the bench's one (alone,
or in a copy of the bench's interleave spec with "env": {"O2C_TRACE": PATH}).
A record per loop: its start and end (wall clock, s), how long the caller
waited for chunks the worker had claimed, the loop's o2c_site, threaded or
alone, the worker's chunks of all, the call of NAME_run it belongs to, the
caller's CPU, and the worker's CPU and first word of its affinity mask at
its last job. Why: a 2-thread process ran at the 1-thread speed in the
interleaved driver (docs/DESIGN.md, "Quantized operators"), and the pool's
own decisions (holds after stalls, moves of either thread) are only visible
from inside. The records cost a clock read and a store per loop; only the
generated pool's text is touched (the kernels are the same C)."""
import collections
import sys

TRACE_C = r'''
#include <stdio.h>
#include <stdlib.h>
/* pool_trace.py: one record per threaded loop, written at exit */
typedef struct { double t0, t1, wait; const void *site; int team, theirs, n, call, cpu, wcpu, wmask; } o2c_trec;
static o2c_trec o2c_tbuf[1 << 20];
static long o2c_tn; /* the counters are declared before the worker */
static void o2c_trace(const void *site, int team, double t0, double t1, double wait, int theirs, int n) {
  if (o2c_tn >= (1 << 20)) return;
  o2c_trec r = {t0, t1, wait, site, team, theirs, n, (int)o2c_tcalls, O2C_CPU(), atomic_load(&o2c_wcpu), atomic_load(&o2c_wmask)};
  o2c_tbuf[o2c_tn++] = r;
}
__attribute__((destructor)) static void o2c_tdump(void) {
  const char *p = getenv("O2C_TRACE");
  FILE *f = p ? fopen(p, "w") : NULL;
  if (!f) return;
  fprintf(f, "# worker_moves %ld caller_moves %ld worker_sleeps %ld calls %ld pulls %ld\n", o2c_wmoves, o2c_cmoves,
          o2c_sleeps, o2c_tcalls, o2c_pulls);
  for (long i = 0; i < o2c_tn; i++) {
    o2c_trec *r = &o2c_tbuf[i];
    fprintf(f, "%.7f %.7f %.7f %p %d %d %d %d %d %d %x\n", r->t0, r->t1, r->wait, r->site, r->team, r->theirs, r->n, r->call,
            r->cpu, r->wcpu, (unsigned)r->wmask);
  }
  fclose(f);
}
'''


def sub(text, old, new):
    if text.count(old) != 1:
        sys.exit(f'pool_trace: expected one "{old[:60]}" in the file (a build without --threads, or a changed pool)')
    return text.replace(old, new)


def patch(src, dst, name):
    t = open(src).read()
    t = sub(t, 'static void *o2c_pool_worker(void *arg) {',
            'static long o2c_wmoves, o2c_cmoves, o2c_sleeps, o2c_tcalls, o2c_pulls;\n'
            'static _Atomic int o2c_wcpu = -1, o2c_wmask;\nstatic void *o2c_pool_worker(void *arg) {')
    t = sub(t, '      atomic_fetch_add(&o2c_pool.sleepers, 1);\n',
            '      atomic_fetch_add(&o2c_pool.sleepers, 1);\n      o2c_sleeps++;\n')
    t = sub(t, 'if (cpu >= 0 && cpu == caller && have && o2c_pool_away(&all, cpu))',
            'if (cpu >= 0 && cpu == caller && have && o2c_pool_away(&all, cpu) && ++o2c_wmoves)')
    t = sub(t, '    nap = cpu >= 0 && cpu == caller;\n',
            '    nap = cpu >= 0 && cpu == caller;\n'
            '    { cpu_set_t m_; unsigned w_ = 0; atomic_store(&o2c_wcpu, cpu);\n'
            '      if (!sched_getaffinity(0, sizeof m_, &m_)) memcpy(&w_, &m_, sizeof w_), atomic_store(&o2c_wmask, (int)w_); }\n')
    t = sub(t, 'if ((pulled = o2c_pool_pull(cpu, was))) spin = O2C_POOL_SPIN;',
            'if ((pulled = o2c_pool_pull(cpu, was))) spin = O2C_POOL_SPIN, o2c_pulls++;')
    t = sub(t, 'if (o2c_pool_away(&all, at)) (void)sched_setaffinity(0, sizeof all, &all);',
            'if (o2c_pool_away(&all, at)) (void)sched_setaffinity(0, sizeof all, &all), o2c_cmoves++;')
    # the records' definitions after the pool's state, before o2c_pool_run uses them
    t = sub(t, '/* fn(ctx, lo, hi) over [0, iters) in `nchunks` chunks',
            TRACE_C + '/* fn(ctx, lo, hi) over [0, iters) in `nchunks` chunks')
    t = sub(t, '    o2c_pool_span(t0, t1, wait);\n',
            '    o2c_pool_span(t0, t1, wait);\n'
            '    o2c_trace(site, team, t0, t1, wait, (int)(nchunks - mine), (int)nchunks);\n')
    head = f'int {name}_run(const void *const *inputs'
    i = t.find(head)
    if i < 0:
        sys.exit(f'pool_trace: no {name}_run in {src}')
    j = t.index('{\n', i) + 2
    t = t[:j] + '  o2c_tcalls++;\n' + t[j:]
    open(dst, 'w').write(t)


def summary(paths):
    for p in paths:
        lines = open(p).read().split('\n')
        head = lines[0]
        rows = [ln.split() for ln in lines[1:] if ln.strip()]
        team = [r for r in rows if r[4] == '1']
        stalls = [r for r in team if float(r[2]) > 500e-6]
        print(f'{p}: {head[2:]}; {len(rows)} loops, {len(team)} threaded, {len(stalls)} waits over 500 us')
        for r in stalls[:10]:
            t = float(r[1]) - float(r[0])
            print(f'  wait {1e3 * float(r[2]):.3f} ms in a loop of {1e3 * t:.3f} ms (site {r[3][-4:]}, call {r[7]}, '
                  f'worker {r[5]}/{r[6]} chunks, CPUs caller {r[8]} worker {r[9]} mask {r[10]})')
        calls = collections.defaultdict(list)
        for r in rows:
            calls[int(r[7])].append(r)
        for c in sorted(calls)[-8:]:
            rs = calls[c]
            span = float(rs[-1][1]) - float(rs[0][0])
            loops = sum(float(r[1]) - float(r[0]) for r in rs)
            wait = sum(float(r[2]) for r in rs)
            theirs = sum(int(r[5]) for r in rs if r[4] == '1')
            chunks = sum(int(r[6]) for r in rs if r[4] == '1')
            cpus = collections.Counter(f'{r[8]}/{r[9]}' for r in rs)
            print(f'  call {c}: {1e3 * span:.2f} ms first to last loop, loops {1e3 * loops:.2f}, waits {1e3 * wait:.2f}; '
                  f'{sum(r[4] == "0" for r in rs)} of {len(rs)} loops alone; worker {theirs} of {chunks} chunks; '
                  f'caller/worker CPUs {dict(cpus)}')


if __name__ == '__main__':
    if len(sys.argv) == 5 and sys.argv[1] == 'patch':
        patch(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) >= 3 and sys.argv[1] == 'summary':
        summary(sys.argv[2:])
    else:
        sys.exit(__doc__)
