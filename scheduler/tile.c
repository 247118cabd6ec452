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
 * weight (K x nr floats) is reused by every row block from cache; when the
 * rows are the weight (a convolution: W[M, C*taps]), row blocks run outside,
 * so a block's weights are read once, not once per column panel (3x3,
 * 512 -> 512 at 7x7: 9.4 MB of weights), and the parallel loop has M/mr
 * blocks to share, not a few rows of output. Columns larger than L2 run
 * in chunks of an outer axis (gemm_order.c: sched_gemm_chunk_columns), the row blocks
 * inside each: band [chunk, i<m>t, other axes.., i<n>t]. isolate
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

enum { G_INIT, G_SUM, G_STORE, G_LOAD, G_SAVE, G_ALL = 31 };

typedef struct {
  char name[16];
  const int *ax;
  int nax;
  int group; /* G_*: I, U, F; with k slices also L, S (over the outer axes and the slice) */
  int stage;
} tile_stmt;

static bool sliced_stmt(const tile_stmt *s) {
  return s->group == G_LOAD || s->group == G_SAVE;
}

static void stmt_head(strbuf *b, const sched_kernel *k, const tile_stmt *s) {
  sb_printf(b, "%s[", s->name);
  tuple(b, k, s->ax, s->nax);
  sb_printf(b, "%s]", sliced_stmt(s) ? ",ikt" : "");
}

/* The number of slices of k (1 when not sliced). */
static int64_t nslices(const sched_kernel *k) {
  int64_t K = k->space.d[k->gemm.k];
  return k->gemm.kc ? (K + k->gemm.kc - 1) / k->gemm.kc : 1;
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
  /* a block is loaded before every slice but the first, saved after every one but the last */
  if (s->group == G_LOAD) sb_printf(b, " and 1 <= ikt < %lld", (long long)nslices(k));
  if (s->group == G_SAVE) sb_printf(b, " and 0 <= ikt < %lld", (long long)nslices(k) - 1);
  sb_printf(b, "; ");
}

/* "[{ S[..] -> [(e0)]; .. }, { S[..] -> [(e1)]; .. }]" for the statements
 * of `groups` (bit set), each dimension written by `dim`. */
typedef void dim_fn(strbuf *b, const sched_kernel *k, const tile_stmt *s, int i);

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
      dim(&b, k, &st[i], d);
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

/* The band dimension of a chunk of axis a (outer_dims): below -1, never an
 * axis or m; CHUNK_AXIS is its inverse. */
#define CHUNK_DIM(a) (-2 - (a))
#define CHUNK_AXIS(d) (-2 - (d))

/* The tile band: kept axes other than m and n in their order, then the
 * column tile, then the row tile (with k slices the row tile is in a band
 * of its own, below the slice; rows_outer: the row tile first, then the
 * other axes and the column tile; cols_outer, or a symbolic other axis:
 * the column tile first, then the static other axes, then the symbolic
 * ones; chunk: a chunk of one axis, then the row tile, then the others).
 * Its dimensions are parallel. */
static int outer_dims(const sched_kernel *k, int *dims) {
  int n = 0;
  /* a symbolic kept axis (a batch, one at run time) outermost would be the
   * loop the thread pool splits: the column tile goes first instead */
  bool cols_first = k->gemm.cols_outer;
  for (int i = 0; i < k->nouter && !k->gemm.chunk && !k->gemm.rows_outer; i++)
    cols_first |= k->outer[i] != k->gemm.m && k->outer[i] != k->gemm.n && ir_dim_is_sym(k->space.d[k->outer[i]]);
  if (k->gemm.chunk) dims[n++] = CHUNK_DIM(k->gemm.chunk_axis);
  if (k->gemm.chunk && k->gemm.m >= 0) dims[n++] = k->gemm.m;
  if (k->gemm.m >= 0 && k->gemm.rows_outer) dims[n++] = k->gemm.m;
  if (cols_first) dims[n++] = k->gemm.n;
  /* then, with the column tile first, the static axes before the symbolic
   * ones: a product whose columns are two axes (a prefill's widened weight
   * panels [.., N / P, P]: importer/op_matmul.c, op_nbits.c) has one
   * column tile, and the pool then splits the panels, not a batch of one */
  for (int pass = 0; pass < (cols_first ? 2 : 1); pass++)
    for (int i = 0; i < k->nouter; i++) {
      int a = k->outer[i];
      if (a == k->gemm.m || a == k->gemm.n || (cols_first && ir_dim_is_sym(k->space.d[a]) != (pass == 1))) continue;
      dims[n++] = a;
    }
  if (!cols_first) dims[n++] = k->gemm.n;
  if (k->gemm.m >= 0 && !k->gemm.kc && !k->gemm.rows_outer && !k->gemm.chunk) dims[n++] = k->gemm.m;
  return n;
}

static void outer_dim(strbuf *b, const sched_kernel *k, const tile_stmt *s, int i) {
  (void)s;
  int dims[IR_MAX_RANK];
  outer_dims(k, dims);
  if (dims[i] < -1) /* a chunk: of column tiles when the axis is n */
    sb_printf(b, "floor(i%d%s / %d)", CHUNK_AXIS(dims[i]), CHUNK_AXIS(dims[i]) == k->gemm.n ? "t" : "",
              k->gemm.chunk);
  else if (tile_of(k, dims[i]))
    sb_printf(b, "i%dt", dims[i]);
  else
    sb_printf(b, "i%d", dims[i]);
}

/* With k slices: [slice, row tile]. The clear is in the first slice, the
 * store in the last; a sum's slice is floor(k / kc). */
static void slice_dim(strbuf *b, const sched_kernel *k, const tile_stmt *s, int i) {
  if (i == 1)
    sb_printf(b, "i%dt", k->gemm.m);
  else if (sliced_stmt(s))
    sb_printf(b, "ikt");
  else if (s->group == G_SUM)
    sb_printf(b, "floor(i%d / %d)", k->gemm.k, k->gemm.kc);
  else
    sb_printf(b, "%lld", s->group == G_INIT ? 0LL : (long long)nslices(k) - 1);
}

static void point_dim(strbuf *b, const sched_kernel *k, const tile_stmt *s, int i) {
  (void)s;
  sb_printf(b, "i%dp", k->gemm.m >= 0 && i == 0 ? k->gemm.m : k->gemm.n);
}

/* The reduced axes in their order (a convolution sums over channels and
 * taps: c, kh, kw); the innermost runs fastest. */
static void k_dim(strbuf *b, const sched_kernel *k, const tile_stmt *s, int i) {
  (void)s;
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
    int t = tile_of(k, dims[i]), a = CHUNK_AXIS(dims[i]);
    if (dims[i] < -1) { /* every chunk: only the tiles inside need be full */
      sb_printf(&b, "%s0 <= d%d and %d*d%d < ", i ? " and " : "", i,
                a == k->gemm.n ? k->gemm.chunk * k->gemm.nr : k->gemm.chunk, i);
      sched_dim_isl(p, &b, k->space.d[a]);
      continue;
    }
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

/* isolate[[tile band] -> [slice, row tile]]: the full row tiles. */
static isl_union_set *isolate_full_rows(sched_program *p, const sched_kernel *k) {
  int dims[IR_MAX_RANK], n = outer_dims(k, dims), mr = k->gemm.mr;
  strbuf b = {0};
  sched_isl_params(p, k, &b);
  sb_printf(&b, "{ isolate[[");
  for (int i = 0; i < n; i++) sb_printf(&b, "%sd%d", i ? "," : "", i);
  sb_printf(&b, "] -> [e0,e1]] : 0 <= e1 and %d*e1 + %d <= ", mr, mr);
  sched_dim_isl(p, &b, k->space.d[k->gemm.m]);
  sb_printf(&b, " }");
  isl_union_set *s = isl_union_set_read_from_str(p->ctx, b.s);
  free(b.s);
  return s;
}

/* isolate[[tile band, reduced axes (nk)] -> [row, column position]]: the
 * positions of full row tiles, on a point band whose rows are unrolled. */
static isl_union_set *isolate_full_points(sched_program *p, const sched_kernel *k, int nk) {
  int dims[IR_MAX_RANK], n = outer_dims(k, dims), mr = k->gemm.mr, row = 0;
  strbuf b = {0};
  sched_isl_params(p, k, &b);
  sb_printf(&b, "{ isolate[[");
  for (int i = 0; i < n + nk; i++) sb_printf(&b, "%sd%d", i ? "," : "", i);
  for (int i = 0; i < n; i++)
    if (dims[i] == k->gemm.m) row = i;
  sb_printf(&b, "] -> [e0,e1]] : 0 <= d%d and %d*d%d + %d <= ", row, mr, row, mr);
  sched_dim_isl(p, &b, k->space.d[k->gemm.m]);
  sb_printf(&b, " }");
  isl_union_set *s = isl_union_set_read_from_str(p->ctx, b.s);
  free(b.s);
  return s;
}

/* The statements whose group is in the bit set `groups`. */
static isl_union_set *filter(isl_ctx *ctx, const sched_kernel *k, const tile_stmt *st, int nst,
                             unsigned groups) {
  strbuf b = {0};
  sb_printf(&b, "{ ");
  for (int i = 0; i < nst; i++)
    if (groups & (1u << st[i].group)) stmt_head(&b, k, &st[i]), sb_printf(&b, "; ");
  sb_printf(&b, "}");
  isl_union_set *s = isl_union_set_read_from_str(ctx, b.s);
  free(b.s);
  return s;
}

/* The products one step of the reduction adds per row of the block: each
 * stage's sum of products (codegen adds them one FMA each), else 1. */
static int64_t step_products(const sched_program *p, const sched_kernel *k) {
  int64_t n = 0;
  for (int i = 0; i < k->nstages; i++) {
    ir_ref terms[SCHED_SUM_TERMS_MAX];
    int nt = sched_stage_terms(p, k, i, terms);
    n += nt >= 2 ? nt : 1;
  }
  return n;
}

/* At most this many products in a step of the reduction unrolled over its
 * innermost axis (rows x products x taps): MatMulNBits over rows sums 8
 * codes a step, and its 4 words of a block unrolled over 12 rows made a
 * step of 384 statements that gcc -O3 took 78 s to compile (tree IV
 * optimisation; the tiny LLaMA's prefill, Zen 5); a 3x3 convolution's
 * step holds 24-36. */
enum { UNROLL_STEP_MAX = 256 };

static isl_schedule *build_tree(sched_program *p, const sched_kernel *k, const tile_stmt *st,
                                int nst, __isl_take isl_union_set *dom, bool misorder) {
  isl_ctx *ctx = p->ctx;
  int dims[IR_MAX_RANK], nouter = outer_dims(k, dims), npoint = k->gemm.m >= 0 ? 2 : 1;
  isl_schedule *s0 = isl_schedule_from_domain(dom);
  isl_schedule_node *node = isl_schedule_node_child(isl_schedule_get_root(s0), 0);
  isl_schedule_free(s0); /* the node holds its own reference */
  node = isl_schedule_node_insert_partial_schedule(node,
                                                   band(ctx, k, st, nst, G_ALL, nouter, outer_dim));
  node = isl_schedule_node_band_set_permutable(node, 1);
  node = isl_schedule_node_band_set_ast_build_options(node, isolate_full_tiles(p, k));
  node = isl_schedule_node_child(node, 0);
  if (k->gemm.kc) {
    node = isl_schedule_node_insert_mark(node, isl_id_alloc(ctx, SCHED_MARK_KSLICES, NULL));
    node = isl_schedule_node_child(node, 0);
    node = isl_schedule_node_insert_partial_schedule(node,
                                                     band(ctx, k, st, nst, G_ALL, 2, slice_dim));
    node = isl_schedule_node_band_set_ast_build_options(node, isolate_full_rows(p, k));
    node = isl_schedule_node_child(node, 0);
  }
  isl_union_set_list *f = isl_union_set_list_alloc(ctx, 3);
  /* clear or load, sum, save or store (tile_misorder: the sum last) */
  unsigned order[3] = {1u << G_INIT | 1u << G_LOAD, 1u << G_SUM, 1u << G_STORE | 1u << G_SAVE};
  if (misorder) order[1] = 1u << G_STORE | 1u << G_SAVE, order[2] = 1u << G_SUM;
  for (int i = 0; i < 3; i++) f = isl_union_set_list_add(f, filter(ctx, k, st, nst, order[i]));
  node = isl_schedule_node_insert_sequence(node, f);
  for (int i = 0; i < 3; i++) {
    unsigned g = order[i];
    node = isl_schedule_node_child(isl_schedule_node_child(node, i), 0);
    if (g == 1u << G_SUM) {
      /* marked: the printer keeps the compiler from unrolling it (a short k
       * loop unrolled gets vectorised along k, with shuffles, not along nr) */
      node = isl_schedule_node_insert_mark(node, isl_id_alloc(ctx, SCHED_MARK_REDUCTION, NULL));
      node = isl_schedule_node_child(node, 0);
      node =
          isl_schedule_node_insert_partial_schedule(node, band(ctx, k, st, nst, g, k->nred, k_dim));
      /* a convolution's innermost tap loop (kw: 3) unrolled: a loop of 3
       * around the block cost 8-10 % (3x3, 64 -> 64 at 56x56) */
      int64_t inner = k->space.d[k->red[k->nred - 1]], rows = k->gemm.mr > 1 ? k->gemm.mr : 1;
      if (k->nred > 1 && !ir_dim_is_sym(inner) && inner <= 4 &&
          inner * rows * step_products(p, k) <= UNROLL_STEP_MAX)
        node = isl_schedule_node_band_member_set_ast_loop_type(node, k->nred - 1, isl_ast_loop_unroll);
      node = isl_schedule_node_child(node, 0);
    }
    node = isl_schedule_node_insert_partial_schedule(node,
                                                     band(ctx, k, st, nst, g, npoint, point_dim));
    /* a symbolic number of rows: the rows of the last, partial tile (0 to
     * mr - 1 of them) are a loop, not mr - 1 copies of a row each under a
     * guard of its own (twice: after the full tiles and when there are
     * none), which made a 12-row block's kernel 4458 lines (MatMulNBits,
     * blocks of 32: 8 products x 4 steps per row) */
    if (k->gemm.m >= 0 && ir_dim_is_sym(k->space.d[k->gemm.m]) && !k->gemm.kc) {
      node = isl_schedule_node_band_set_ast_build_options(
          node, isolate_full_points(p, k, g == 1u << G_SUM ? k->nred : 0));
      node = isl_schedule_node_band_member_set_isolate_ast_loop_type(node, 0, isl_ast_loop_unroll);
    } else if (k->gemm.m >= 0) {
      node = isl_schedule_node_band_member_set_ast_loop_type(node, 0, isl_ast_loop_unroll);
    }
    for (int up = g == 1u << G_SUM ? 4 : 2; up > 0; up--) node = isl_schedule_node_parent(node);
  }
  isl_schedule *s = isl_schedule_node_get_schedule(node);
  isl_schedule_node_free(node);
  return s;
}

/* Accesses that carry dependences: the accumulators — one per output
 * element in the original program (`expanded`), the mr x nr block in the
 * tiled one, there with the block's slot in the partial sums P that LOAD
 * reads and SAVE writes — and the output. */
static void accesses(const sched_kernel *k, const tile_stmt *st, int nst, bool expanded,
                     int root_rank, strbuf *rd, strbuf *wr) {
  for (int i = 0; i < nst; i++) {
    const tile_stmt *s = &st[i];
    if (expanded && sliced_stmt(s)) continue; /* not in the original program */
    for (int a = 0; a < k->nstages; a++) {
      if (s->group != G_STORE && a != s->stage) continue;
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
      bool reads = s->group != G_INIT && s->group != G_LOAD, writes = s->group != G_STORE && s->group != G_SAVE;
      if (reads) stmt_head(rd, k, s), sb_printf(rd, " -> %s; ", acc.s);
      if (writes) stmt_head(wr, k, s), sb_printf(wr, " -> %s; ", acc.s);
      if (sliced_stmt(s)) {
        strbuf *pb = s->group == G_LOAD ? rd : wr;
        stmt_head(pb, k, s);
        sb_printf(pb, " -> P%d[i%dt,i%dp,i%dp]; ", a, k->gemm.m, k->gemm.m, k->gemm.n);
      }
      free(acc.s);
    }
    if (s->group == G_STORE) {
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
    if (sliced_stmt(&st[i])) continue; /* not in the original program */
    stmt_head(&b, k, &st[i]);
    sb_printf(&b, " -> [");
    for (int j = 0; j < k->nouter; j++) coord(&b, k, sorted[j]), sb_printf(&b, ",");
    int phase = st[i].group == G_STORE ? 2 * k->nstages : 2 * st[i].stage + st[i].group;
    sb_printf(&b, "%d,", phase);
    for (int j = 0; j < k->nred; j++)
      if (st[i].group == G_SUM)
        sb_printf(&b, "%si%d", j ? "," : "", k->red[j]);
      else
        sb_printf(&b, "%s0", j ? "," : "");
    sb_printf(&b, "]; ");
  }
  isl_union_map *m = sched_read_umap(ctx, &b);
  free(b.s);
  return m;
}

/* The dependences of the tiled program with the copies through the partial
 * sums taken out: a chain source -> SAVE -> LOAD -> sink becomes source ->
 * sink, comparable with the original program's. */
static isl_union_map *without_copies(isl_ctx *ctx, const sched_kernel *k, const tile_stmt *st,
                                     int nst, __isl_take isl_union_map *dep) {
  isl_union_set *orig = filter(ctx, k, st, nst, 1u << G_INIT | 1u << G_SUM | 1u << G_STORE),
                *save = filter(ctx, k, st, nst, 1u << G_SAVE),
                *load = filter(ctx, k, st, nst, 1u << G_LOAD);
  isl_union_map *to_save = isl_union_map_intersect_range(isl_union_map_copy(dep), isl_union_set_copy(save));
  isl_union_map *save_load = isl_union_map_intersect_range(
      isl_union_map_intersect_domain(isl_union_map_copy(dep), save), load);
  isl_union_map *from_load = isl_union_map_intersect_domain(isl_union_map_copy(dep),
                                                            filter(ctx, k, st, nst, 1u << G_LOAD));
  isl_union_map *chain = isl_union_map_apply_range(isl_union_map_apply_range(to_save, save_load),
                                                   from_load);
  dep = isl_union_map_intersect_range(isl_union_map_intersect_domain(dep, isl_union_set_copy(orig)),
                                      orig);
  return isl_union_map_union(dep, chain);
}

/* 1: the tiled order keeps every dependence and none crosses tiles; 0: not;
 * -1: isl failed. `dom0` is the domain of the original program (no LOAD or
 * SAVE). */
static int tiled_is_legal(isl_ctx *ctx, const sched_kernel *k, const tile_stmt *st, int nst,
                          int root_rank, __isl_keep isl_union_set *dom0,
                          __isl_keep isl_union_set *dom, __isl_keep isl_schedule *tiled,
                          int *ndeps) {
  strbuf rd0 = {0}, wr0 = {0}, rd1 = {0}, wr1 = {0};
  accesses(k, st, nst, true, root_rank, &rd0, &wr0);
  accesses(k, st, nst, false, root_rank, &rd1, &wr1);
  isl_union_map *dep0 = sched_flow(dom0, original_order(ctx, k, st, nst),
                                   sched_read_umap(ctx, &rd0), sched_read_umap(ctx, &wr0));
  isl_union_map *dep1 = sched_flow(dom, isl_schedule_get_map(tiled), sched_read_umap(ctx, &rd1),
                                   sched_read_umap(ctx, &wr1));
  free(rd0.s), free(wr0.s), free(rd1.s), free(wr1.s);
  int dims[IR_MAX_RANK];
  isl_union_map *tile = isl_union_map_from_multi_union_pw_aff(
      band(ctx, k, st, nst, G_ALL, outer_dims(k, dims), outer_dim));
  isl_union_map *across = isl_union_map_apply_range(
      isl_union_map_apply_domain(isl_union_map_copy(dep1), isl_union_map_copy(tile)), tile);
  isl_union_set *delta = isl_union_map_deltas(across);
  *ndeps = dep1 ? (int)isl_union_map_n_map(dep1) : 0;
  if (k->gemm.kc && dep1) dep1 = without_copies(ctx, k, st, nst, dep1);
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
  isl_union_set_free(delta);
  isl_union_map_free(dep0);
  isl_union_map_free(dep1);
  if (same < 0 || zero < 0) return -1;
  return same == isl_bool_true && zero == isl_bool_true;
}

int sched_gemm_build_ast(sched_program *p, sched_kernel *k, char *err, size_t errlen) {
  tile_stmt st[4 * SCHED_MAX_STAGES + 1];
  int nst = 0;
  for (int g = 0; g < 2; g++)
    for (int i = 0; i < k->nstages; i++) {
      tile_stmt *s = &st[nst++];
      snprintf(s->name, sizeof s->name, "%c%d", g ? 'U' : 'I', i);
      s->ax = g ? k->axes : k->outer, s->nax = g ? k->naxes : k->nouter, s->group = g, s->stage = i;
    }
  st[nst++] = (tile_stmt){"F", k->outer, k->nouter, G_STORE, 0};
  int norig = nst; /* the original program: I, U, F */
  for (int g = G_LOAD; g <= G_SAVE && k->gemm.kc; g++)
    for (int i = 0; i < k->nstages; i++) {
      tile_stmt *s = &st[nst++];
      snprintf(s->name, sizeof s->name, "%c%d", g == G_LOAD ? 'L' : 'S', i);
      s->ax = k->outer, s->nax = k->nouter, s->group = g, s->stage = i;
    }
  strbuf d = {0}, d0 = {0};
  sched_isl_params(p, k, &d);
  sched_isl_params(p, k, &d0);
  sb_printf(&d, "{ ");
  sb_printf(&d0, "{ ");
  for (int i = 0; i < nst; i++) domain(p, &d, k, &st[i]);
  for (int i = 0; i < norig; i++) domain(p, &d0, k, &st[i]);
  sb_printf(&d, "}");
  sb_printf(&d0, "}");
  int root_rank = ir_node_get(p->g, k->root)->shape.rank, dims[IR_MAX_RANK],
      ndims = outer_dims(k, dims);
  strbuf key = {0}; /* everything the model below is made of */
  sb_printf(&key, "tile%s|%s|%d,%d,%d,%d,%d|", p->opt.tile_misorder ? "!" : "", d.s, k->gemm.m,
            k->gemm.n, k->gemm.k, k->gemm.kc, k->gemm.rows_outer);
  sb_printf(&key, "c%d,%d|", k->gemm.chunk, k->gemm.chunk_axis);
  for (int i = 0; i < ndims; i++) sb_printf(&key, "%d,", dims[i]);
  for (int i = 0; i < root_rank; i++) sb_printf(&key, "%d;", k->root_axis[i]);
  for (int i = 0; i < k->nred; i++) sb_printf(&key, "r%d", k->red[i]);
  int rc = 0;
  k->ast = sched_memo_get(p, key.s, &k->ndeps);
  if (!k->ast) {
    isl_union_set *dom = isl_union_set_read_from_str(p->ctx, d.s),
                  *dom0 = isl_union_set_read_from_str(p->ctx, d0.s);
    isl_schedule *s = dom && dom0 ? build_tree(p, k, st, nst, isl_union_set_copy(dom),
                                               p->opt.tile_misorder)
                                  : NULL;
    int legal = s ? tiled_is_legal(p->ctx, k, st, nst, root_rank, dom0, dom, s, &k->ndeps) : -1;
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
    isl_union_set_free(dom0);
  }
  free(key.s);
  free(d.s);
  free(d0.s);
  return rc;
}
