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

static bool overlap(const sched_buf *a, const sched_buf *b) {
  return !(a->last < b->first || b->last < a->first);
}

int *sched_place_greedy(sched_program *p, const int64_t *bytes, int *count) {
  int m = 0, *order = malloc((size_t)(p->nbufs + 1) * sizeof *order);
  SCHED_ASSERT(order);
  for (int i = 0; i < p->nbufs; i++)
    if (p->bufs[i].kind == SCHED_BUF_TEMP) order[m++] = i;
  for (int i = 1; i < m; i++) /* largest first, stable */
    for (int j = i; j > 0 && bytes[order[j - 1]] < bytes[order[j]]; j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  p->arena_size = p->arena_naive = 0;
  for (int i = 0; i < m; i++) {
    sched_buf *b = &p->bufs[order[i]];
    int64_t size = align64(bytes[order[i]]), off = 0;
    p->arena_naive += size;
    for (bool moved = true; moved;) {
      moved = false;
      for (int j = 0; j < i; j++) {
        sched_buf *o = &p->bufs[order[j]];
        int64_t osize = align64(bytes[order[j]]);
        if (overlap(o, b) && off < o->offset + osize && o->offset < off + size) {
          off = o->offset + osize;
          moved = true;
        }
      }
    }
    b->offset = off;
    if (off + size > p->arena_size) p->arena_size = off + size;
  }
  *count = m;
  return order;
}

void sched_plan_arena_sym(sched_program *p) {
  int64_t *bytes = calloc((size_t)p->nbufs + 1, sizeof *bytes);
  SCHED_ASSERT(bytes);
  for (int i = 0; i < p->nbufs; i++) {
    int64_t n = sched_ref(p, p->bufs[i].numel), es = (int64_t)ir_dtype_size(p->bufs[i].dtype);
    bytes[i] = n > INT64_MAX / 16 / es ? INT64_MAX / 16 : n * es;
  }
  int m, *order = sched_place_greedy(p, bytes, &m);
  free(bytes);
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
}
