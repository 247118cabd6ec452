/* emit.c — prints kernels as C from their isl ASTs.
 *
 * Loops come from isl (print_node); each user statement's arguments become
 * the index expressions of its axes and the statement is rendered by
 * render.c; pragmas come from pragma.c. */
#include "codegen_impl.h"

#include <isl/ast.h>
#include <isl/id.h>
#include <isl/val.h>
#include <string.h>

/* Is `s` one parenthesised expression, "(...)" with the first parenthesis
 * closed by the last character? */
static bool whole_in_parens(const char *s) {
  size_t n = strlen(s);
  if (n < 2 || s[0] != '(' || s[n - 1] != ')') return false;
  int depth = 0;
  for (size_t i = 0; i < n; i++) {
    depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
    if (depth == 0 && i + 1 < n) return false;
  }
  return true;
}

static void print_node(cg_kernel *c, isl_ast_node *node);

/* A statement of a register-blocked kernel: strip-mined axes come as
 * (tile, position in tile) argument pairs (scheduler/tile.c). */
static void print_tiled_user(cg_kernel *c, isl_ast_expr *call, sched_stmt_kind kind, int stage) {
  const sched_kernel *k = c->k;
  const sched_gemm *gm = &k->gemm;
  bool all = kind == SCHED_STMT_UPDATE;
  const int *ax = all ? k->axes : k->outer;
  int nax = all ? k->naxes : k->nouter, arg = 1;
  char *idx[IR_MAX_RANK];
  cg_buf val[IR_MAX_RANK] = {{0}}, tile = {0}, pos[2] = {{0}}, sub = {0}, mtile = {0};
  for (int i = 0; i < IR_MAX_RANK; i++) idx[i] = "0";
  for (int i = 0; i < nax; i++) {
    int a = ax[i], t = a == gm->n ? gm->nr : a == gm->m ? gm->mr : 0;
    if (!t) {
      cg_expr_arg(&val[i], call, arg++);
    } else {
      cg_buf *p = &pos[a == gm->n];
      if (a == gm->n)
        cg_expr_arg(&tile, call, arg++);
      else
        cg_expr_arg(&val[i], call, arg), cg_expr_arg(&mtile, call, arg++);
      cg_expr_arg(p, call, arg++);
      const char *ts = a == gm->n ? tile.s : val[i].s;
      cg_buf v = {0};
      cg_printf(&v, "(%d * %s + %s)", t, ts, p->s);
      free(val[i].s);
      val[i] = v;
    }
    idx[a] = val[i].s;
  }
  cg_printf(&sub, "[%s][%s]", gm->m >= 0 ? pos[0].s : "0", pos[1].s);
  if (kind == SCHED_STMT_LOAD || kind == SCHED_STMT_SAVE) {
    /* between slices of k: the block from or to its slot in the partial sums */
    if (kind == SCHED_STMT_LOAD)
      cg_line(c->body, c->depth, "acc%d%s = part%d[%s]%s;", stage, sub.s, stage, mtile.s, sub.s);
    else
      cg_line(c->body, c->depth, "part%d[%s]%s = acc%d%s;", stage, mtile.s, sub.s, stage, sub.s);
  } else {
    c->acc_sub = sub.s, c->col_tile = tile.s, c->col = pos[1].s, c->red = all ? idx[gm->k] : NULL;
    cg_render_stmt(c, kind, stage, idx);
    c->acc_sub = "", c->col_tile = c->col = c->red = NULL;
  }
  for (int i = 0; i < nax; i++) free(val[i].s);
  free(tile.s), free(pos[0].s), free(pos[1].s), free(sub.s), free(mtile.s);
}

static void print_user(cg_kernel *c, isl_ast_node *node) {
  c->outside |= !c->in_rows;
  isl_ast_expr *call = isl_ast_node_user_get_expr(node);
  isl_ast_expr *fn = isl_ast_expr_op_get_arg(call, 0);
  isl_id *id = isl_ast_expr_get_id(fn);
  int stage;
  sched_stmt_kind kind = sched_stmt_of(isl_id_get_name(id), &stage);
  isl_id_free(id);
  isl_ast_expr_free(fn);
  if (c->k->gemm.on) {
    print_tiled_user(c, call, kind, stage);
    isl_ast_expr_free(call);
    return;
  }
  /* domain dimensions -> axes of the iteration space */
  bool all = kind == SCHED_STMT_UPDATE || (kind == SCHED_STMT_FINAL && c->k->final_full);
  /* X<i>, I<i> and F over the outer axes take the outer axes as arguments */
  const int *ax = all ? c->k->axes : c->k->outer;
  int nax = all ? c->k->naxes : c->k->nouter;
  char *idx[IR_MAX_RANK];
  for (int i = 0; i < IR_MAX_RANK; i++) idx[i] = "0";
  cg_buf args[IR_MAX_RANK] = {{0}};
  for (int i = 0; i < nax; i++) {
    isl_ast_expr *a = isl_ast_expr_op_get_arg(call, i + 1);
    cg_print_expr(&args[i], a);
    isl_ast_expr_free(a);
    idx[ax[i]] = args[i].s;
  }
  cg_render_stmt(c, kind, stage, idx);
  for (int i = 0; i < nax; i++) free(args[i].s);
  isl_ast_expr_free(call);
}


/* A threaded loop: its body becomes a rows function of the kernel (one per
 * threaded loop: a register-blocked kernel has one loop for its full tiles
 * and one for the rest), called for each chunk by a task function, which
 * the pool (pool.c) runs on its threads. As parameters of a function the
 * pointers keep their restrict (gcc lost it for pointers captured into an
 * OpenMP region, and the softmax's last loop ran at a third of its speed),
 * and the accumulators are its locals; it runs the loop over a chunk's
 * iterations [o2c_lo, o2c_hi). The loop's iterations are counted first:
 * the pool cuts [0, n) into chunks. O2C_KERNEL_FN,
 * O2C_ROWS_PARAMS, O2C_ROWS_ARGS, O2C_TASK_ARGS and O2C_ROWS_VOID are filled
 * in by program.c (the kernel's name, parameters and arguments). */
static void print_rows_loop(cg_kernel *c, isl_ast_node *node, const char *it, const char *init,
                            const char *cond, const char *inc) {
  int d = c->depth, r = c->nrows++;
  cg_line(c->body, d, "{");
  cg_line(c->body, d + 1, "int64_t o2c_n = 0;");
  cg_line(c->body, d + 1, "for (int64_t %s = %s; %s; %s += %s) o2c_n++;", it, init, cond, it, inc);
  cg_line(c->body, d + 1, "O2C_KERNEL_FN_args o2c_a = {O2C_ROWS_ARGS, %s, %s};", init, inc);
  cg_buf *outer = c->body, fn = {0};
  cg_printf(&fn, "%s", c->decl ? c->decl : "");
  /* the chunk's iterations loop inside the rows function: a loop without
   * loops inside (a collapsed element-wise kernel) is then still vectorised
   * over restrict pointers, not called once per element */
  cg_line(&fn, 1, "for (int64_t %s = o2c_lo; %s < o2c_hi; %s += %s) {", it, it, it, inc);
  c->body = &fn;
  c->in_rows = true; /* its loops are printed one level in, but not threaded */
  c->depth = d + 1;
  isl_ast_node *body = isl_ast_node_for_get_body(node);
  print_node(c, body);
  isl_ast_node_free(body);
  c->depth = d;
  c->in_rows = false;
  cg_line(&fn, 1, "}");
  c->body = outer;
  c->rows_syms |= cg_dims_used(c->p, &fn); /* its symbols' locals at its top */
  cg_buf attrs = {0};
  cg_fn_attrs(&attrs, c);
  cg_printf(c->rows,
            "static %sint O2C_KERNEL_FN_rows%d(O2C_ROWS_PARAMS, int64_t o2c_lo, int64_t o2c_hi) {\n"
            "  int err = 0;\n  O2C_ROWS_VOID\n%s  return err;\n}\n\n"
            "static int O2C_KERNEL_FN_task%d(void *v, int64_t lo, int64_t hi) {\n"
            "  const O2C_KERNEL_FN_args *a = v;\n"
            "  return O2C_KERNEL_FN_rows%d(O2C_TASK_ARGS, a->o2c_first + lo * a->o2c_step,\n"
            "                               a->o2c_first + hi * a->o2c_step);\n}\n\n",
            attrs.s ? attrs.s : "", r, fn.s ? fn.s : "", r, r);
  free(fn.s), free(attrs.s);
  /* after the body: whether the kernel can fail (has_index) is known now */
  cg_line(c->body, d + 1, "static o2c_site o2c_s;");
  cg_line(c->body, d + 1, "%so2c_pool_run(O2C_KERNEL_FN_task%d, &o2c_a, o2c_n, %lld, &o2c_s)%s;",
          c->has_index ? "if (" : "", r, (long long)c->chunks, c->has_index ? ") err = 1" : "");
  cg_line(c->body, d, "}");
  c->out->pool = true;
}

/* The rows of a register block's step, when each is a loop over the
 * columns of one update that adds several products (a strided
 * convolution's taps, each a column vector of its own phase): the number
 * of products, else 0. The step is then printed product by product, each
 * over all the rows, so one product's columns serve every row and are
 * dead before the next one's are loaded; printed row by row, the 9 taps x
 * 2 vectors of columns stayed live across the rows with the 12
 * accumulators, and gcc re-read half of them from memory in every row.
 * Each accumulator still adds its products in the same order. More than
 * 4 products only. */
static int block_terms(cg_kernel *c, isl_ast_node_list *l) {
  int n = isl_ast_node_list_n_ast_node(l), nt = 0, stage0 = -1;
  if (!c->k->gemm.on || n < 2) return 0;
  for (int i = 0; i < n; i++) {
    isl_ast_node *ch = isl_ast_node_list_get_ast_node(l, i);
    isl_ast_node *body = isl_ast_node_get_type(ch) == isl_ast_node_for ? isl_ast_node_for_get_body(ch) : NULL;
    int stage = -1;
    if (body && isl_ast_node_get_type(body) == isl_ast_node_user) {
      isl_ast_expr *call = isl_ast_node_user_get_expr(body);
      isl_ast_expr *fn = isl_ast_expr_op_get_arg(call, 0);
      isl_id *id = isl_ast_expr_get_id(fn);
      if (sched_stmt_of(isl_id_get_name(id), &stage) != SCHED_STMT_UPDATE) stage = -1;
      isl_id_free(id), isl_ast_expr_free(fn), isl_ast_expr_free(call);
    }
    isl_ast_node_free(body), isl_ast_node_free(ch);
    if (stage < 0 || (i && stage != stage0)) return 0;
    stage0 = stage;
  }
  /* not a few products (the audio front end's 2- and 3-tap layers): their
   * columns fit beside the accumulators, and row by row measured 1-2 %
   * faster there */
  nt = cg_update_terms(c, stage0);
  return nt > 4 ? nt : 0;
}

/* The value of an integer AST expression, or false. */
static bool ast_int(isl_ast_expr *e, int64_t *v) {
  if (!e || isl_ast_expr_get_type(e) != isl_ast_expr_int) return false;
  isl_val *x = isl_ast_expr_get_val(e);
  bool ok = x && isl_val_is_int(x);
  if (ok) *v = isl_val_get_num_si(x);
  isl_val_free(x);
  return ok;
}

void cg_fn_attrs(cg_buf *o, cg_kernel *c) {
  bool block = c->k->gemm.on, ymm = c->has_f64 && c->short_loop;
  cg_printf(o, "%s%s%s", block ? "O2C_BLOCK " : "", c->narrows_f64 ? "O2C_NO_SLP " : "", ymm ? "O2C_F64_YMM " : "");
  c->out->block |= block, c->out->no_slp |= c->narrows_f64, c->out->f64_ymm |= ymm; /* program.c defines them */
}

/* The constant bounds [lo, hi) of a unit-step loop over `it`, or false. */
static bool loop_bounds(isl_ast_node *node, int64_t *lo, int64_t *hi) {
  isl_ast_expr *init = isl_ast_node_for_get_init(node), *inc = isl_ast_node_for_get_inc(node),
               *cond = isl_ast_node_for_get_cond(node);
  int64_t step = 0, ub = 0;
  bool ok = ast_int(init, lo) && ast_int(inc, &step) && step == 1 && isl_ast_expr_get_type(cond) == isl_ast_expr_op;
  if (ok) {
    enum isl_ast_expr_op_type t = isl_ast_expr_op_get_type(cond);
    isl_ast_expr *b = isl_ast_expr_op_get_arg(cond, 1);
    ok = (t == isl_ast_expr_op_le || t == isl_ast_expr_op_lt) && ast_int(b, &ub);
    *hi = t == isl_ast_expr_op_le ? ub + 1 : ub;
    isl_ast_expr_free(b);
  }
  isl_ast_expr_free(init), isl_ast_expr_free(inc), isl_ast_expr_free(cond);
  return ok;
}

static void split_piece(cg_kernel *c, isl_ast_node *body, const char *it, int64_t lo, int64_t hi, int mode) {
  if (lo >= hi) return;
  if (hi - lo < CG_LONG_LOOP) c->short_loop = true;
  cg_line(c->body, c->depth, "for (int64_t %s = %lld; %s < %lld; %s += 1) {", it, (long long)lo, it, (long long)hi, it);
  c->split_mode = mode;
  c->split_it = it; /* again: a piece's own inner loop may have split (and cleared it) */
  c->depth++;
  print_node(c, body);
  c->depth--;
  c->split_mode = 0;
  cg_line(c->body, c->depth, "}");
}

/* An innermost loop of a kernel without sums whose statement reads views
 * masked along its iterator (a padded copy: `c2 >= 1 && c2 < 321` in every
 * element) runs as the loops before, inside and after the range where all
 * those masks hold; inside, the conditions are left out, so gcc vectorises
 * a plain copy (a condition on an outer iterator is unswitched). The
 * DBNet-like 16 -> 24 layer's padded copy: see docs/DESIGN.md, "Masks split
 * out of the innermost loop". */
/* gcc makes the middle of a padded copy a memcpy call per row; on rows
 * of 160 floats that lost to the masked loop it vectorised before, from
 * 320 on it won (see docs/DESIGN.md) */
#define SPLIT_MIN 256
/* a statement reading several masked views is no memcpy: split from 64
 * (ResNet-18's MaxPool rows pass, three masked rows into 114 columns:
 * see docs/DESIGN.md, "MaxPool in two passes") */
#define SPLIT_MIN_READS 64

/* gcc 12 at -O3 miscompiles loops whose body is a short loop (a row)
 * reading views masked along their iterator (docs/DESIGN.md, "Masks split
 * out of the innermost loop"): with constant bounds and rows of 2, the
 * masked loads of different vector iterations share one mask (AVX2 or
 * AVX-512; a Pad of x[15, 2] by 3 rows: 6 values read as 0); with
 * AVX-512, a float16 Pad over rows of 5 and 8 (read as float, stored
 * through o2c_f2h), and a Concat of 8-byte elements (double, int64) over
 * rows of 4 and 8 under a variable outer bound (a threaded rows function).
 * Such a loop, over a body loop of at most SPLIT_INNER_MAX iterations, is
 * split at any length where its masks hold, or cut at each of their
 * bounds where they share no range (a Concat's halves): no masked read
 * is left to vectorise (and unswitched, the copy is faster anyway). */
#define SPLIT_INNER_MAX 8

/* Is `body` a loop of at most SPLIT_INNER_MAX iterations (constant
 * bounds) around one statement? */
static bool short_inner_loop(isl_ast_node *body) {
  int64_t lo, hi;
  if (isl_ast_node_get_type(body) != isl_ast_node_for || !loop_bounds(body, &lo, &hi) ||
      hi - lo > SPLIT_INNER_MAX)
    return false;
  isl_ast_node *in = isl_ast_node_for_get_body(body);
  bool ok = isl_ast_node_get_type(in) == isl_ast_node_user;
  isl_ast_node_free(in);
  return ok;
}

static bool split_loop(cg_kernel *c, isl_ast_node *node, const char *it) {
  int64_t lo, hi;
  if (c->k->gemm.on || c->k->nstages || c->split_mode || !loop_bounds(node, &lo, &hi)) return false;
  isl_ast_node *body = isl_ast_node_for_get_body(node);
  bool short_nest = short_inner_loop(body), user = isl_ast_node_get_type(body) == isl_ast_node_user;
  /* a loop around a nest: only cut, where its masks have no common range
   * and the nest has none of its own (it could not split them inside a
   * piece): a Concat along an outer axis, each part's nest then reads
   * without conditions (the 16 parts of a Winograd transform,
   * importer/conv_winograd.c) */
  bool nest = !short_nest && isl_ast_node_get_type(body) == isl_ast_node_for;
  bool ok = short_nest || user || nest, cut = false;
  if (ok) {
    /* render the body once to a scratch buffer, collecting the masks */
    cg_buf scratch = {0}, *keep = c->body;
    int nvars = c->nvars;
    bool has_index = c->has_index;
    c->body = &scratch;
    c->split_it = it, c->split_lo = lo, c->split_hi = hi, c->split_n = 0, c->split_bad = false;
    c->split_from = lo, c->split_to = hi, c->split_ncuts = 0, c->split_other = 0;
    c->split_mode = 1;
    c->depth++;
    print_node(c, body);
    c->depth--;
    c->split_mode = 0;
    c->body = keep, c->nvars = nvars, c->has_index = has_index;
    free(scratch.s);
    int64_t len = c->split_hi - c->split_lo;
    bool masks = c->split_n > 0 && !c->split_bad;
    ok = masks && !nest && (short_nest ? len > 0 : len >= (c->split_n > 1 ? SPLIT_MIN_READS : SPLIT_MIN));
    cut = masks && len <= 0 &&
          (short_nest ? c->split_ncuts <= 8 : nest && !c->split_other && c->split_ncuts <= CG_SPLIT_CUTS);
  }
  if (cut) {
    /* masks with no common range (a Concat's two halves): a piece between
     * each two of their bounds, where each holds or fails */
    int64_t at[CG_SPLIT_CUTS + 2];
    int n = 0;
    at[n++] = lo;
    for (int i = 0; i < c->split_ncuts; i++) at[n++] = c->split_cuts[i];
    at[n++] = hi;
    for (int i = 1; i < n; i++) /* sort (at most CG_SPLIT_CUTS + 2) */
      for (int j = i; j > 0 && at[j - 1] > at[j]; j--) {
        int64_t t = at[j];
        at[j] = at[j - 1], at[j - 1] = t;
      }
    for (int i = 0; i + 1 < n; i++) {
      c->split_pa = at[i], c->split_pb = at[i + 1];
      split_piece(c, body, it, at[i], at[i + 1], 3);
    }
  } else if (ok) {
    int64_t a = c->split_lo, b = c->split_hi;
    split_piece(c, body, it, lo, a, 0);
    split_piece(c, body, it, a, b, 2);
    split_piece(c, body, it, b, hi, 0);
  }
  c->split_it = NULL;
  isl_ast_node_free(body);
  return ok || cut;
}

static void print_node(cg_kernel *c, isl_ast_node *node) {
  switch (isl_ast_node_get_type(node)) {
  case isl_ast_node_for: {
    isl_ast_expr *it = isl_ast_node_for_get_iterator(node), *init = isl_ast_node_for_get_init(node),
                 *cond = isl_ast_node_for_get_cond(node), *inc = isl_ast_node_for_get_inc(node);
    cg_buf i = {0}, b = {0}, cd = {0}, s = {0};
    cg_print_expr(&i, it);
    cg_print_expr(&b, init);
    cg_print_expr(&cd, cond);
    cg_print_expr(&s, inc);
    /* the bare comparison, without its outer parentheses */
    if (cd.s[0] == '(' && cd.s[cd.n - 1] == ')') {
      memmove(cd.s, cd.s + 1, cd.n - 2);
      cd.s[cd.n - 2] = 0;
    }
    /* the outermost loop, also under a guard at the top: isl prints a
     * symbolic M's full row blocks as `if (M >= mr) for ...` (a symbolic
     * 1.1B prefill's products ran on one thread at --threads 2) */
    bool threads = (c->depth == 1 || (c->depth == 2 && c->top_if)) && !c->in_rows && !c->in_slices &&
                   c->worth_threads && c->rows && (!c->k->gemm.on || cg_whole_tiles(node));
    if (threads) {
      print_rows_loop(c, node, i.s, b.s, cd.s, s.s);
      free(i.s), free(b.s), free(cd.s), free(s.s);
      isl_ast_expr_free(it), isl_ast_expr_free(init), isl_ast_expr_free(cond),
          isl_ast_expr_free(inc);
      break;
    }
    /* a loop is long when it has many iterations or a symbolic bound (the
     * threaded loop over rows, above, has bounds known at run time only) */
    int64_t lo, hi;
    if (loop_bounds(node, &lo, &hi) ? hi - lo < CG_LONG_LOOP : !strstr(cd.s, "o2c_sym")) c->short_loop = true;
    if (!c->k_loop && split_loop(c, node, i.s)) {
      free(i.s), free(b.s), free(cd.s), free(s.s);
      isl_ast_expr_free(it), isl_ast_expr_free(init), isl_ast_expr_free(cond), isl_ast_expr_free(inc);
      break;
    }
    bool kloop = c->k_loop, pieces = kloop && c->pieces;
    if (!kloop) cg_simd_pragma(c, node);
    c->k_loop = false;
    if (pieces) {
      /* pieces of SCHED_KPIECE steps, each fetching lines of the next panel */
      const char *ub = c->pieces_ub;
      cg_line(c->body, c->depth++, "for (int64_t %sp = %s; %sp <= %s; %sp += %d) {", i.s, b.s, i.s, ub, i.s,
              SCHED_KPIECE);
      cg_prefetch_piece(c);
      cg_line(c->body, c->depth, "const int64_t %se = %sp + %d < %s ? %sp + %d : %s;", i.s, i.s,
              SCHED_KPIECE - 1, ub, i.s, SCHED_KPIECE - 1, ub);
      cg_line(c->body, c->depth, "O2C_NOUNROLL");
      cg_line(c->body, c->depth, "for (int64_t %s = %sp; %s <= %se; %s += 1) {", i.s, i.s, i.s, i.s, i.s);
    } else {
      cg_line(c->body, c->depth, "for (int64_t %s = %s; %s; %s += %s) {", i.s, b.s, cd.s, i.s, s.s);
    }
    free(i.s), free(b.s), free(cd.s), free(s.s);
    isl_ast_expr_free(it), isl_ast_expr_free(init), isl_ast_expr_free(cond), isl_ast_expr_free(inc);
    isl_ast_node *body = isl_ast_node_for_get_body(node);
    c->depth++;
    if (kloop && c->k->gemm.on) cg_prefetch_weights(c, node), cg_prefetch_streams(c, node);
    print_node(c, body);
    c->depth--;
    isl_ast_node_free(body);
    cg_line(c->body, c->depth, "}");
    if (pieces) cg_line(c->body, --c->depth, "}");
    break;
  }
  case isl_ast_node_block: {
    isl_ast_node_list *l = isl_ast_node_block_get_children(node);
    int nt = block_terms(c, l);
    for (int t = 0; t < (nt ? nt : 1); t++)
      for (int i = 0; i < isl_ast_node_list_n_ast_node(l); i++) {
        isl_ast_node *ch = isl_ast_node_list_get_ast_node(l, i);
        c->one_term = nt > 0, c->term = t;
        print_node(c, ch);
        c->one_term = false;
        isl_ast_node_free(ch);
      }
    isl_ast_node_list_free(l);
    break;
  }
  case isl_ast_node_if: {
    isl_ast_expr *cond = isl_ast_node_if_get_cond(node);
    cg_buf cd = {0};
    cg_print_expr(&cd, cond);
    isl_ast_expr_free(cond);
    /* an operation prints in parentheses: `if ((c0 == 6))` is one pair
     * too many for clang (-Wparentheses-equality) */
    cg_line(c->body, c->depth, whole_in_parens(cd.s) ? "if %s {" : "if (%s) {", cd.s);
    free(cd.s);
    bool top_if = c->top_if;
    c->top_if = c->depth == 1 && !c->in_rows;
    isl_ast_node *t = isl_ast_node_if_get_then_node(node);
    c->depth++;
    print_node(c, t);
    c->depth--;
    isl_ast_node_free(t);
    if (isl_ast_node_if_has_else_node(node)) {
      cg_line(c->body, c->depth, "} else {");
      isl_ast_node *e = isl_ast_node_if_get_else_node(node);
      c->depth++;
      print_node(c, e);
      c->depth--;
      isl_ast_node_free(e);
    }
    c->top_if = top_if;
    cg_line(c->body, c->depth, "}");
    break;
  }
  case isl_ast_node_user: print_user(c, node); break;
  case isl_ast_node_mark: {
    isl_id *id = isl_ast_node_mark_get_id(node);
    isl_ast_node *b = isl_ast_node_mark_get_node(node);
    char *ub = NULL;
    if (!strcmp(isl_id_get_name(id), SCHED_MARK_REDUCTION)) {
      c->k_loop = isl_ast_node_get_type(b) == isl_ast_node_for;
      /* opens a block for the fetch pointers (closed below) */
      ub = c->k_loop && c->k->gemm.on ? cg_prefetch_spread(c, b) : NULL;
      c->pieces = ub != NULL, c->pieces_ub = ub;
      cg_line(c->body, c->depth, "O2C_NOUNROLL");
      c->out->nounroll = true;
    }
    bool sliced = !strcmp(isl_id_get_name(id), SCHED_MARK_KSLICES), in_slices = c->in_slices;
    c->in_slices |= sliced;
    isl_id_free(id);
    print_node(c, b);
    c->in_slices = in_slices;
    if (ub) {
      c->pieces = false, c->pieces_ub = NULL;
      cg_line(c->body, --c->depth, "}");
      free(ub);
    }
    isl_ast_node_free(b);
    break;
  }
  default: c->error = true;
  }
}

int cg_kernel_body(cg_kernel *c) {
  c->depth = 1;
  c->acc_sub = "";
  c->worth_threads = cg_wants_threads(c);
  cg_buf decl = {0}, main = {0}, *out = c->body;
  for (int i = 0; i < c->k->nstages; i++) {
    const char *T = cg_ctype(ir_node_get(c->p->g, c->k->stages[i])->dtype);
    if (c->k->gemm.on && c->k->gemm.kc)
      cg_line(&decl, 1, "%s part%d[%d][%d][%d];", T, i, c->k->gemm.mtiles, c->k->gemm.mr,
              c->k->gemm.nr);
    if (c->k->gemm.on)
      for (int j = 0; j < cg_acc_parts(c, i); j++) /* acc<i>, acc<i>_<j> */
        if (j)
          cg_line(&decl, 1, "%s acc%d_%d[%d][%d];", T, i, j, c->k->gemm.mr, c->k->gemm.nr);
        else
          cg_line(&decl, 1, "%s acc%d[%d][%d];", T, i, c->k->gemm.mr, c->k->gemm.nr);
    else
      cg_line(&decl, 1, "%s acc%d;", T, i);
    if (cg_is_float_max(c, i)) cg_line(&decl, 1, "int nan%d;", i);
  }
  for (int i = 0; i < c->k->ngathers; i++) cg_line(&decl, 1, "int64_t g%d;", i);
  cg_buf rows = {0}, *rows_out = c->rows;
  if (c->rows) c->rows = &rows;
  c->decl = decl.s;
  c->body = &main;
  print_node(c, c->k->ast);
  c->body = out;
  /* the locals where statements use them: the rows functions have theirs */
  if (c->outside || !c->nrows) cg_printf(out, "%s", decl.s ? decl.s : "");
  if (c->nrows) cg_printf(rows_out, "%s", rows.s ? rows.s : "");
  cg_printf(out, "%s", main.s ? main.s : "");
  c->rows = rows_out;
  c->decl = NULL;
  free(decl.s), free(main.s), free(rows.s);
  cg_statement_begin(c);
  free(c->memo);
  free(c->pre.s);
  return c->error ? -1 : 0;
}
