/* tile.c — the isl model of a register-blocked matmul kernel and its loop
 * nest (the form is chosen in gemm.c).
 *
 * The rows axis m and the columns axis n are strip-mined in the statement
 * domains themselves: axis a of tile size T becomes the pair (i<a>t, i<a>p)
 * with a = T * i<a>t + i<a>p and 0 <= i<a>p < T, so the printer sees the
 * position inside the tile directly (it indexes the accumulator block).
 * Statements: I<s> (clear block s), U<s> (accumulate over k), F (store the
 * block through the epilogue). The schedule tree:
 *
 *   band [other kept axes.., i<n>t, i<m>t]     permutable; isolate: full tiles
 *     sequence
 *       { I* }: band [i<m>p (unrolled), i<n>p]
 *       { U* }: band [reduced axes]; band [i<m>p (unrolled), i<n>p]
 *       { F  }: band [i<m>p (unrolled), i<n>p]
 *
 * The tile band runs column panels outside row blocks, so one panel of a
 * weight (K x nr floats) is reused by every row block from cache. isolate
 * gives full tiles their own loop nest with constant bounds (no min() or
 * guards in the unrolled rows); partial tiles follow.
 *
 * Legality is proven, not assumed: the value-based dependences of the
 * kernel run in the tiled order with the real storage (one mr x nr block
 * per stage, reused by every tile) must equal those of the original order
 * with one accumulator per output element, and none may cross tiles — so
 * every read sees the value it saw before, and the tile band is parallel
 * (each thread owning its blocks). */
#include "sched_impl.h"

#include <isl/aff.h>
#include <isl/ast_build.h>
#include <isl/id.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <string.h>

static int tile_of(const sched_kernel *k, int a) {
  return a == k->gemm.n ? k->gemm.nr : a == k->gemm.m ? k->gemm.mr : 0;
}

/* "i1t,i1p,i2t,i2p,i3": the domain tuple over axes `ax`. */
static void tuple(strbuf *b, const sched_kernel *k, const int *ax, int n) {
  for (int i = 0; i < n; i++)
    if (tile_of(k, ax[i]))
      sb_printf(b, "%si%dt,i%dp", i ? "," : "", ax[i], ax[i]);
    else
      sb_printf(b, "%si%d", i ? "," : "", ax[i]);
}

/* The value of axis `a` in the domain's variables. */
static void coord(strbuf *b, const sched_kernel *k, int a) {
  if (tile_of(k, a))
    sb_printf(b, "(%d*i%dt + i%dp)", tile_of(k, a), a, a);
  else
    sb_printf(b, "i%d", a);
}

typedef struct {
  char name[16];
  const int *ax;
  int nax;
  int group; /* 0: I, 1: U, 2: F */
  int stage;
} tile_stmt;

static void stmt_head(strbuf *b, const sched_kernel *k, const tile_stmt *s) {
  sb_printf(b, "%s[", s->name);
  tuple(b, k, s->ax, s->nax);
  sb_printf(b, "]");
}

static void domain(sched_program *p, strbuf *b, const sched_kernel *k, const tile_stmt *s) {
  stmt_head(b, k, s);
  for (int i = 0; i < s->nax; i++) {
    int a = s->ax[i], t = tile_of(k, a);
    if (t)
      sb_printf(b, "%s0 <= i%dp < %d and 0 <= %d*i%dt + i%dp < ", i ? " and " : " : ", a, t, t, a,
                a);
    else
      sb_printf(b, "%s0 <= i%d < ", i ? " and " : " : ", a);
    sched_dim_isl(p, b, k->space.d[a]);
  }
  sb_printf(b, "; ");
}

/* "[{ S[..] -> [(e0)]; .. }, { S[..] -> [(e1)]; .. }]" for the statements
 * of `groups` (bit set), each dimension written by `dim`. */
typedef void dim_fn(strbuf *b, const sched_kernel *k, int i);

static isl_multi_union_pw_aff *band(isl_ctx *ctx, const sched_kernel *k, const tile_stmt *st,
                                    int nst, unsigned groups, int ndims, dim_fn *dim) {
  strbuf b = {0};
  sb_printf(&b, "[");
  for (int d = 0; d < ndims; d++) {
    sb_printf(&b, "%s{ ", d ? ", " : "");
    bool first = true;
    for (int i = 0; i < nst; i++) {
      if (!(groups & (1u << st[i].group))) continue;
      sb_printf(&b, "%s", first ? "" : "; ");
      stmt_head(&b, k, &st[i]);
      sb_printf(&b, " -> [(");
      dim(&b, k, d);
      sb_printf(&b, ")]");
      first = false;
    }
    sb_printf(&b, " }");
  }
  sb_printf(&b, "]");
  isl_multi_union_pw_aff *m = isl_multi_union_pw_aff_read_from_str(ctx, b.s);
  free(b.s);
  return m;
}

/* The tile band: kept axes other than m and n in their order, then the
 * column tile, then the row tile. */
static int outer_dims(const sched_kernel *k, int *dims) {
  int n = 0;
  for (int i = 0; i < k->nouter; i++)
    if (k->outer[i] != k->gemm.m && k->outer[i] != k->gemm.n) dims[n++] = k->outer[i];
  dims[n++] = k->gemm.n;
  if (k->gemm.m >= 0) dims[n++] = k->gemm.m;
  return n;
}

static void outer_dim(strbuf *b, const sched_kernel *k, int i) {
  int dims[IR_MAX_RANK];
  outer_dims(k, dims);
  if (tile_of(k, dims[i]))
    sb_printf(b, "i%dt", dims[i]);
  else
    sb_printf(b, "i%d", dims[i]);
}

static void point_dim(strbuf *b, const sched_kernel *k, int i) {
  sb_printf(b, "i%dp", k->gemm.m >= 0 && i == 0 ? k->gemm.m : k->gemm.n);
}

/* The reduced axes in their order (a convolution sums over channels and
 * taps: c, kh, kw); the innermost runs fastest. */
static void k_dim(strbuf *b, const sched_kernel *k, int i) {
  sb_printf(b, "i%d", k->red[i]);
}

/* isolate[[] -> [tile band]]: the tiles whose rows and columns are all inside. */
static isl_union_set *isolate_full_tiles(sched_program *p, const sched_kernel *k) {
  int dims[IR_MAX_RANK], n = outer_dims(k, dims);
  strbuf b = {0};
  sched_isl_params(p, k, &b);
  sb_printf(&b, "{ isolate[[] -> [");
  for (int i = 0; i < n; i++) sb_printf(&b, "%sd%d", i ? "," : "", i);
  sb_printf(&b, "]] : ");
  for (int i = 0; i < n; i++) {
    int t = tile_of(k, dims[i]);
    if (t)
      sb_printf(&b, "%s0 <= d%d and %d*d%d + %d <= ", i ? " and " : "", i, t, i, t);
    else
      sb_printf(&b, "%s0 <= d%d < ", i ? " and " : "", i);
    sched_dim_isl(p, &b, k->space.d[dims[i]]);
  }
  sb_printf(&b, " }");
  isl_union_set *s = isl_union_set_read_from_str(p->ctx, b.s);
  free(b.s);
  return s;
}

static isl_union_set *filter(isl_ctx *ctx, const sched_kernel *k, const tile_stmt *st, int nst,
                             int group) {
  strbuf b = {0};
  sb_printf(&b, "{ ");
  for (int i = 0; i < nst; i++)
    if (st[i].group == group) stmt_head(&b, k, &st[i]), sb_printf(&b, "; ");
  sb_printf(&b, "}");
  isl_union_set *s = isl_union_set_read_from_str(ctx, b.s);
  free(b.s);
  return s;
}

static isl_schedule *build_tree(sched_program *p, const sched_kernel *k, const tile_stmt *st,
                                int nst, __isl_take isl_union_set *dom, bool misorder) {
  isl_ctx *ctx = p->ctx;
  int dims[IR_MAX_RANK], nouter = outer_dims(k, dims), npoint = k->gemm.m >= 0 ? 2 : 1;
  isl_schedule *s0 = isl_schedule_from_domain(dom);
  isl_schedule_node *node = isl_schedule_node_child(isl_schedule_get_root(s0), 0);
  isl_schedule_free(s0); /* the node holds its own reference */
  node =
      isl_schedule_node_insert_partial_schedule(node, band(ctx, k, st, nst, 7, nouter, outer_dim));
  node = isl_schedule_node_band_set_permutable(node, 1);
  node = isl_schedule_node_band_set_ast_build_options(node, isolate_full_tiles(p, k));
  node = isl_schedule_node_child(node, 0);
  isl_union_set_list *f = isl_union_set_list_alloc(ctx, 3);
  int order[3] = {0, 1, 2}; /* clear, sum, store (tile_misorder: clear, store, sum) */
  if (misorder) order[1] = 2, order[2] = 1;
  for (int i = 0; i < 3; i++) f = isl_union_set_list_add(f, filter(ctx, k, st, nst, order[i]));
  node = isl_schedule_node_insert_sequence(node, f);
  for (int i = 0; i < 3; i++) {
    int g = order[i];
    node = isl_schedule_node_child(isl_schedule_node_child(node, i), 0);
    if (g == 1) {
      /* marked: the printer keeps the compiler from unrolling it (a short k
       * loop unrolled gets vectorised along k, with shuffles, not along nr) */
      node = isl_schedule_node_insert_mark(node, isl_id_alloc(ctx, SCHED_MARK_REDUCTION, NULL));
      node = isl_schedule_node_child(node, 0);
      node =
          isl_schedule_node_insert_partial_schedule(node, band(ctx, k, st, nst, 1u << g, k->nred, k_dim));
      /* a convolution's innermost tap loop (kw: 3) unrolled: a loop of 3
       * around the block cost 8-10 % (3x3, 64 -> 64 at 56x56) */
      int64_t inner = k->space.d[k->red[k->nred - 1]];
      if (k->nred > 1 && !ir_dim_is_sym(inner) && inner <= 4)
        node = isl_schedule_node_band_member_set_ast_loop_type(node, k->nred - 1, isl_ast_loop_unroll);
      node = isl_schedule_node_child(node, 0);
    }
    node = isl_schedule_node_insert_partial_schedule(
        node, band(ctx, k, st, nst, 1u << g, npoint, point_dim));
    if (k->gemm.m >= 0)
      node = isl_schedule_node_band_member_set_ast_loop_type(node, 0, isl_ast_loop_unroll);
    for (int up = g == 1 ? 4 : 2; up > 0; up--) node = isl_schedule_node_parent(node);
  }
  isl_schedule *s = isl_schedule_node_get_schedule(node);
  isl_schedule_node_free(node);
  return s;
}

/* Accesses that carry dependences: the accumulators — one per output
 * element in the original program (`expanded`), the mr x nr block in the
 * tiled one — and the output. */
static void accesses(const sched_kernel *k, const tile_stmt *st, int nst, bool expanded,
                     int root_rank, strbuf *rd, strbuf *wr) {
  for (int i = 0; i < nst; i++) {
    const tile_stmt *s = &st[i];
    for (int a = 0; a < k->nstages; a++) {
      if (s->group != 2 && a != s->stage) continue;
      strbuf acc = {0};
      sb_printf(&acc, "A%d[", a);
      if (expanded) {
        for (int j = 0; j < k->nouter; j++) {
          if (j) sb_printf(&acc, ",");
          coord(&acc, k, k->outer[j]);
        }
      } else if (k->gemm.m >= 0) {
        sb_printf(&acc, "i%dp,i%dp", k->gemm.m, k->gemm.n);
      } else {
        sb_printf(&acc, "i%dp", k->gemm.n);
      }
      sb_printf(&acc, "]");
      if (s->group > 0) stmt_head(rd, k, s), sb_printf(rd, " -> %s; ", acc.s);
      if (s->group < 2) stmt_head(wr, k, s), sb_printf(wr, " -> %s; ", acc.s);
      free(acc.s);
    }
    if (s->group == 2) {
      stmt_head(wr, k, s);
      sb_printf(wr, " -> OUT[");
      for (int j = 0; j < root_rank; j++) {
        if (j) sb_printf(wr, ",");
        if (k->root_axis[j] >= 0)
          coord(wr, k, k->root_axis[j]);
        else
          sb_printf(wr, "0");
      }
      sb_printf(wr, "]; ");
    }
  }
}

/* The original order: per output element (kept axes in axis order), each
 * stage's clear and sum in turn, then the store. */
static isl_union_map *original_order(isl_ctx *ctx, const sched_kernel *k, const tile_stmt *st,
                                     int nst) {
  int sorted[IR_MAX_RANK];
  sched_outer_sorted(k, sorted);
  strbuf b = {0};
  for (int i = 0; i < nst; i++) {
    stmt_head(&b, k, &st[i]);
    sb_printf(&b, " -> [");
    for (int j = 0; j < k->nouter; j++) coord(&b, k, sorted[j]), sb_printf(&b, ",");
    int phase = st[i].group == 2 ? 2 * k->nstages : 2 * st[i].stage + st[i].group;
    sb_printf(&b, "%d,", phase);
    for (int j = 0; j < k->nred; j++)
      if (st[i].group == 1)
        sb_printf(&b, "%si%d", j ? "," : "", k->red[j]);
      else
        sb_printf(&b, "%s0", j ? "," : "");
    sb_printf(&b, "]; ");
  }
  isl_union_map *m = sched_read_umap(ctx, &b);
  free(b.s);
  return m;
}

/* 1: the tiled order keeps every dependence and none crosses tiles; 0: not;
 * -1: isl failed. */
static int tiled_is_legal(isl_ctx *ctx, const sched_kernel *k, const tile_stmt *st, int nst,
                          int root_rank, __isl_keep isl_union_set *dom,
                          __isl_keep isl_schedule *tiled, int *ndeps) {
  strbuf rd0 = {0}, wr0 = {0}, rd1 = {0}, wr1 = {0};
  accesses(k, st, nst, true, root_rank, &rd0, &wr0);
  accesses(k, st, nst, false, root_rank, &rd1, &wr1);
  isl_union_map *dep0 = sched_flow(dom, original_order(ctx, k, st, nst), sched_read_umap(ctx, &rd0),
                                   sched_read_umap(ctx, &wr0));
  isl_union_map *dep1 = sched_flow(dom, isl_schedule_get_map(tiled), sched_read_umap(ctx, &rd1),
                                   sched_read_umap(ctx, &wr1));
  free(rd0.s), free(wr0.s), free(rd1.s), free(wr1.s);
  int dims[IR_MAX_RANK];
  isl_union_map *tile = isl_union_map_from_multi_union_pw_aff(
      band(ctx, k, st, nst, 7, outer_dims(k, dims), outer_dim));
  isl_union_map *across = isl_union_map_apply_range(
      isl_union_map_apply_domain(isl_union_map_copy(dep1), isl_union_map_copy(tile)), tile);
  isl_union_set *delta = isl_union_map_deltas(across);
  isl_bool same = isl_union_map_is_equal(dep0, dep1), zero = isl_bool_error;
  if (delta) { /* every dependence stays inside its tile: all distances on the tile band are 0 */
    strbuf z = {0};
    sb_printf(&z, "{ [");
    for (int i = 0; i < outer_dims(k, dims); i++) sb_printf(&z, "%s0", i ? "," : "");
    sb_printf(&z, "] }");
    isl_union_set *zs = isl_union_set_read_from_str(ctx, z.s);
    free(z.s);
    zero = isl_union_set_is_subset(delta, zs);
    isl_union_set_free(zs);
  }
  *ndeps = dep1 ? (int)isl_union_map_n_map(dep1) : 0;
  isl_union_set_free(delta);
  isl_union_map_free(dep0);
  isl_union_map_free(dep1);
  if (same < 0 || zero < 0) return -1;
  return same == isl_bool_true && zero == isl_bool_true;
}

int sched_gemm_build_ast(sched_program *p, sched_kernel *k, char *err, size_t errlen) {
  tile_stmt st[2 * SCHED_MAX_STAGES + 1];
  int nst = 0;
  for (int g = 0; g < 2; g++)
    for (int i = 0; i < k->nstages; i++) {
      tile_stmt *s = &st[nst++];
      snprintf(s->name, sizeof s->name, "%c%d", g ? 'U' : 'I', i);
      s->ax = g ? k->axes : k->outer, s->nax = g ? k->naxes : k->nouter, s->group = g, s->stage = i;
    }
  st[nst++] = (tile_stmt){"F", k->outer, k->nouter, 2, 0};
  strbuf d = {0};
  sched_isl_params(p, k, &d);
  sb_printf(&d, "{ ");
  for (int i = 0; i < nst; i++) domain(p, &d, k, &st[i]);
  sb_printf(&d, "}");
  int root_rank = ir_node_get(p->g, k->root)->shape.rank, dims[IR_MAX_RANK],
      ndims = outer_dims(k, dims);
  strbuf key = {0}; /* everything the model below is made of */
  sb_printf(&key, "tile%s|%s|%d,%d,%d|", p->opt.tile_misorder ? "!" : "", d.s, k->gemm.m, k->gemm.n,
            k->gemm.k);
  for (int i = 0; i < ndims; i++) sb_printf(&key, "%d,", dims[i]);
  for (int i = 0; i < root_rank; i++) sb_printf(&key, "%d;", k->root_axis[i]);
  for (int i = 0; i < k->nred; i++) sb_printf(&key, "r%d", k->red[i]);
  int rc = 0;
  k->ast = sched_memo_get(p, key.s, &k->ndeps);
  if (!k->ast) {
    isl_union_set *dom = isl_union_set_read_from_str(p->ctx, d.s);
    isl_schedule *s =
        dom ? build_tree(p, k, st, nst, isl_union_set_copy(dom), p->opt.tile_misorder) : NULL;
    int legal = s ? tiled_is_legal(p->ctx, k, st, nst, root_rank, dom, s, &k->ndeps) : -1;
    if (legal < 0) {
      rc = -1;
      snprintf(err, errlen, "internal: isl rejected the tiled model of kernel %%%d: %s", k->root,
               d.s);
    } else if (!legal) {
      rc = -1;
      snprintf(err, errlen, "internal: the tiled schedule of kernel %%%d changes a dependence",
               k->root);
    } else {
      isl_ast_build *b = sched_ast_build(p, k);
      k->ast = isl_ast_build_node_from_schedule(b, isl_schedule_copy(s));
      isl_ast_build_free(b);
      if (!k->ast)
        rc = -1, snprintf(err, errlen, "internal: isl could not build the loop nest of kernel %%%d",
                          k->root);
      else
        sched_memo_put(p, key.s, k->ast, k->ndeps);
    }
    isl_schedule_free(s);
    isl_union_set_free(dom);
  }
  free(key.s);
  free(d.s);
  return rc;
}
