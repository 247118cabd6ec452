/* arena.c — the arena plan when buffer sizes are symbolic.
 *
 * Sizes that depend on symbols (batch * seq * 64 * 4 bytes) cannot have
 * constant offsets. The greedy plan of the static case is made at the
 * reference point (ir_dim_ref: each symbol at its bound, else 64) and only
 * its *order* is kept: of two buffers whose lifetimes overlap, the one
 * placed lower there stays below the other. At run time the generated code
 * computes, in that order,
 *   off(b) = max over o below b of align64(off(o) + size(o))   (0 if none)
 * which is overlap-free for every value of the symbols: any two buffers
 * alive at once are ordered, and the upper starts past the lower's end.
 * When the sizes happen to be static this is exactly the greedy result, so
 * the reference-point plan is also what --dump schedule reports. */
#include "sched_impl.h"

#include <string.h>

int64_t sched_ref(const sched_program *p, int64_t d) {
  return ir_dim_ref(p->g, d);
}

static int64_t align64(int64_t x) {
  return (x + 63) & ~(int64_t)63;
}

static int64_t ref_bytes(const sched_program *p, const sched_buf *b) {
  int64_t n = sched_ref(p, b->numel), es = (int64_t)ir_dtype_size(b->dtype);
  return n > INT64_MAX / 16 / es ? INT64_MAX / 16 : align64(n * es);
}

static bool overlap(const sched_buf *a, const sched_buf *b) {
  return !(a->last < b->first || b->last < a->first);
}

void sched_plan_arena_sym(sched_program *p) {
  int m = 0, *order = malloc((size_t)(p->nbufs + 1) * sizeof *order);
  int64_t *size = malloc((size_t)(p->nbufs + 1) * sizeof *size);
  SCHED_ASSERT(order && size);
  for (int i = 0; i < p->nbufs; i++)
    if (p->bufs[i].kind == SCHED_BUF_TEMP) order[m++] = i, size[i] = ref_bytes(p, &p->bufs[i]);
  /* largest first (stable), as in the static plan */
  for (int i = 1; i < m; i++)
    for (int j = i; j > 0 && size[order[j - 1]] < size[order[j]]; j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  p->arena_size = p->arena_naive = 0;
  for (int i = 0; i < m; i++) {
    sched_buf *b = &p->bufs[order[i]];
    int64_t off = 0;
    p->arena_naive += size[order[i]];
    for (bool moved = true; moved;) {
      moved = false;
      for (int j = 0; j < i; j++) {
        sched_buf *o = &p->bufs[order[j]];
        if (overlap(o, b) && off < o->offset + size[order[j]] && o->offset < off + size[order[i]]) {
          off = o->offset + size[order[j]];
          moved = true;
        }
      }
    }
    b->offset = off;
    if (off + size[order[i]] > p->arena_size) p->arena_size = off + size[order[i]];
  }
  /* the run-time order: by reference offset, ties by placement (a buffer of
   * size 0 at the reference point may share an offset there) */
  for (int i = 1; i < m; i++)
    for (int j = i; j > 0 && p->bufs[order[j - 1]].offset > p->bufs[order[j]].offset; j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  p->plan = order;
  p->nplan = m;
  for (int i = 0; i < m; i++) {
    sched_buf *b = &p->bufs[order[i]];
    b->plan = i;
    b->below = malloc((size_t)(i + 1) * sizeof *b->below);
    SCHED_ASSERT(b->below);
    b->nbelow = 0;
    for (int j = 0; j < i; j++)
      if (overlap(&p->bufs[order[j]], b)) b->below[b->nbelow++] = order[j];
  }
  free(size);
}
