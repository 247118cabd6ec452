/* sched_isl.c — the isl model of a kernel and its loop nest.
 *
 * A kernel's domain dimensions are the axes of its iteration space with
 * size other than 1 (size-1 axes always index 0). Statements: for each
 * reduction stage i, I<i> (initialise the accumulator, over the outer axes)
 * and U<i> (update it, over all axes); then F, the final store, over all
 * axes or over the outer axes. The schedule keeps the outer axes outermost
 * and shared, then a phase number, then the reduced axes:
 *   I<i>[o] -> [o, 2i, 0..], U<i>[o, r] -> [o, 2i+1, r], F[o(, r)] -> [o, 2k, r or 0..]
 * so each accumulator lives in a scalar while its reduction loop runs.
 * Hoisted gather indices X<i>[o] come first, at phases before all these
 * (shifting them); without stages the outer axes are then the axes the
 * indices depend on, and the rest (the copied rows) run inside. */
#include "sched_impl.h"

#include <isl/ast_build.h>
#include <isl/flow.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <stdarg.h>
#include <string.h>

void sb_printf(strbuf *b, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    SCHED_ASSERT(k >= 0);
    if (b->s && b->n + (size_t)k < b->cap) {
      b->n += (size_t)k;
      return;
    }
    b->cap = (b->cap + (size_t)k + 1) * 2;
    b->s = realloc(b->s, b->cap);
    SCHED_ASSERT(b->s);
  }
}

void sched_dim_isl(sched_program *p, strbuf *b, int64_t d) {
  if (!ir_dim_is_sym(d)) {
    sb_printf(b, "%lld", (long long)d);
    return;
  }
  if (ir_dim_is_affine(d)) { /* printed whole: a cut expression would be another set */
    size_t n = ir_dim_to_c(d, NULL, 0) + 1;
    char *s = malloc(n);
    SCHED_ASSERT(s);
    ir_dim_to_c(d, s, n);
    sb_printf(b, "%s", s);
    free(s);
    return;
  }
  int e = 0;
  while (e < p->next && p->ext[e] != d) e++;
  if (e == p->next) {
    p->ext = realloc(p->ext, (size_t)(p->next + 1) * sizeof *p->ext);
    SCHED_ASSERT(p->ext);
    p->ext[p->next++] = d;
  }
  sb_printf(b, SCHED_EXT_PREFIX "%d", e);
}

/* The symbols (bit k) and non-affine extents (in `ext`) of k's space. */
static uint32_t kernel_params(sched_program *p, const sched_kernel *k, bool *ext) {
  uint32_t syms = 0;
  for (int i = 0; i < k->naxes; i++) {
    int64_t d = k->extent[k->axes[i]];
    if (!ir_dim_is_sym(d)) continue;
    if (ir_dim_is_affine(d)) {
      syms |= ir_dim_syms(d);
    } else {
      strbuf t = {0};
      sched_dim_isl(p, &t, d); /* registers it */
      free(t.s);
      for (int e = 0; e < p->next; e++) ext[e] |= p->ext[e] == d;
    }
  }
  return syms;
}

/* "[a, b] -> " or "", with " : a >= 1 and b >= 1" in *cond when asked. */
static void params_str(sched_program *p, const sched_kernel *k, strbuf *b, strbuf *cond) {
  bool *ext =
      calloc((size_t)(p->next + k->naxes + 1), sizeof *ext); /* kernel_params may add k->naxes */
  SCHED_ASSERT(ext);
  uint32_t syms = kernel_params(p, k, ext);
  int n = 0;
  for (int s = 0; s < IR_MAX_SYMS; s++)
    if (syms & (1u << s)) {
      sb_printf(b, "%s%s", n ? ", " : "[", ir_dim_sym_cname(s));
      if (cond) sb_printf(cond, "%s%s >= 1", n ? " and " : " : ", ir_dim_sym_cname(s));
      n++;
    }
  for (int e = 0; e < p->next; e++)
    if (ext[e]) {
      sb_printf(b, "%s" SCHED_EXT_PREFIX "%d", n ? ", " : "[", e);
      if (cond) sb_printf(cond, "%s" SCHED_EXT_PREFIX "%d >= 1", n ? " and " : " : ", e);
      n++;
    }
  if (n) sb_printf(b, "] -> ");
  free(ext);
}

void sched_isl_params(sched_program *p, const sched_kernel *k, strbuf *b) {
  params_str(p, k, b, NULL);
}

isl_ast_build *sched_ast_build(sched_program *p, const sched_kernel *k) {
  strbuf pre = {0}, cond = {0};
  params_str(p, k, &pre, &cond);
  if (!pre.s) return isl_ast_build_alloc(p->ctx);
  strbuf ctx = {0};
  sb_printf(&ctx, "%s{%s }", pre.s,
            cond.s); /* the parameters are >= 1: no guards for empty loops */
  isl_set *set = isl_set_read_from_str(p->ctx, ctx.s);
  free(pre.s), free(cond.s), free(ctx.s);
  return set ? isl_ast_build_from_context(set) : NULL;
}

/* "{ NAME[i0,..] : 0 <= i0 < d0 and .. }" over the listed axes. */
static void domain_str(sched_program *p, strbuf *b, const char *name, const sched_kernel *k,
                       const int *ax, int n) {
  sb_printf(b, "%s[", name);
  for (int i = 0; i < n; i++) sb_printf(b, "%si%d", i ? "," : "", ax[i]);
  sb_printf(b, "]");
  for (int i = 0; i < n; i++) {
    sb_printf(b, "%s0 <= i%d < ", i ? " and " : " : ", ax[i]);
    sched_dim_isl(p, b, k->extent[ax[i]]);
  }
}

sched_stmt_kind sched_stmt_of(const char *name, int *stage) {
  *stage = name[0] && name[1] ? atoi(name + 1) : 0;
  switch (name[0]) {
  case 'X': return SCHED_STMT_INDEX;
  case 'I': return SCHED_STMT_INIT;
  case 'U': return SCHED_STMT_UPDATE;
  case 'L': return SCHED_STMT_LOAD;
  case 'S': return SCHED_STMT_SAVE;
  default: return SCHED_STMT_FINAL;
  }
}

/* "NAME[i..] -> ARRAY[i..]; " over the listed axes. */
static void access(strbuf *b, const char *name, const int *ax, int nax, const char *array,
                   const int *idx, int nidx) {
  sb_printf(b, "%s[", name);
  for (int i = 0; i < nax; i++) sb_printf(b, "%si%d", i ? "," : "", ax[i]);
  sb_printf(b, "] -> %s[", array);
  for (int i = 0; i < nidx; i++)
    if (idx[i] >= 0)
      sb_printf(b, "%si%d", i ? "," : "", idx[i]);
    else
      sb_printf(b, "%s0", i ? "," : "");
  sb_printf(b, "]; ");
}

/* The isl model of a kernel with its outer axes in the order `outer`:
 * statement domains, the schedule, and the accesses to the values that
 * carry dependences inside it — accumulator i as A<i>[outer] (the scalar,
 * expanded per outer point), hoisted index h as G<h>[outer], the output as
 * OUT[root index]. Kernel inputs are read-only and carry none. Every later
 * statement is taken to read every earlier accumulator and index. */
typedef struct {
  strbuf dom, sch, rd, wr;
  sched_program *p; /* names symbolic extents */
} model;

static void statement(model *m, const sched_kernel *k, const int *outer, const char *name, bool all,
                      int phase) {
  const int *ax = all ? k->axes : k->outer;
  int nax = all ? k->naxes : k->nouter;
  domain_str(m->p, &m->dom, name, k, ax, nax);
  sb_printf(&m->dom, "; ");
  sb_printf(&m->sch, "%s[", name);
  for (int i = 0; i < nax; i++) sb_printf(&m->sch, "%si%d", i ? "," : "", ax[i]);
  sb_printf(&m->sch, "] -> [");
  for (int i = 0; i < k->nouter; i++) sb_printf(&m->sch, "i%d,", outer[i]);
  sb_printf(&m->sch, "%d", phase);
  for (int i = 0; i < k->nred; i++)
    if (all)
      sb_printf(&m->sch, ",i%d", k->red[i]);
    else
      sb_printf(&m->sch, ",0");
  sb_printf(&m->sch, "]; ");
}

static void kernel_model(model *m, const sched_kernel *k, const int *outer, int root_rank) {
  char name[16], arr[16];
  int h = k->ngathers;
  int rax[IR_MAX_RANK]; /* a collapsed axis is indexed 0: its loop's iterator counts for it */
  for (int i = 0; i < root_rank; i++)
    rax[i] = k->root_axis[i] >= 0 && !(k->collapsed >> k->root_axis[i] & 1) ? k->root_axis[i] : -1;
  for (int i = 0; i < h; i++) {
    snprintf(name, sizeof name, "X%d", i);
    statement(m, k, outer, name, false, i);
    snprintf(arr, sizeof arr, "G%d", i);
    access(&m->wr, name, k->outer, k->nouter, arr, k->outer, k->nouter);
  }
  for (int i = 0; i <= k->nstages; i++) {
    bool final = i == k->nstages, all = final ? k->final_full : true;
    const int *ax = all ? k->axes : k->outer;
    int nax = all ? k->naxes : k->nouter;
    const char *stmt = final ? "F" : (snprintf(name, sizeof name, "U%d", i), name);
    char init[16];
    if (!final) {
      snprintf(init, sizeof init, "I%d", i);
      statement(m, k, outer, init, false, h + 2 * i);
      snprintf(arr, sizeof arr, "A%d", i);
      access(&m->wr, init, k->outer, k->nouter, arr, k->outer, k->nouter);
    }
    statement(m, k, outer, stmt, all, h + 2 * i + (final ? 0 : 1));
    for (int j = 0; j < h; j++) {
      snprintf(arr, sizeof arr, "G%d", j);
      access(&m->rd, stmt, ax, nax, arr, k->outer, k->nouter);
    }
    for (int j = 0; j <= i && j < k->nstages; j++) {
      snprintf(arr, sizeof arr, "A%d", j);
      access(&m->rd, stmt, ax, nax, arr, k->outer, k->nouter);
    }
    if (!final) access(&m->wr, stmt, ax, nax, arr, k->outer, k->nouter);
    /* a stashed summand: the stage stores it into the output, the final
     * statement reads it back there (sched.c, stash_summand) */
    if (k->stash && (final || k->stash == i + 1))
      access(final ? &m->rd : &m->wr, stmt, ax, nax, "OUT", rax, root_rank);
  }
  access(&m->wr, "F", k->final_full ? k->axes : k->outer, k->final_full ? k->naxes : k->nouter,
         "OUT", rax, root_rank);
}

struct sched_memo {
  char *key;
  isl_ast_node *ast;
  int ndeps;
};

isl_ast_node *sched_memo_get(const sched_program *p, const char *key, int *ndeps) {
  for (int i = 0; i < p->nmemo; i++)
    if (!strcmp(p->memo[i].key, key)) {
      *ndeps = p->memo[i].ndeps;
      return isl_ast_node_copy(p->memo[i].ast);
    }
  return NULL;
}

void sched_memo_put(sched_program *p, const char *key, isl_ast_node *ast, int ndeps) {
  p->memo = realloc(p->memo, (size_t)(p->nmemo + 1) * sizeof *p->memo);
  char *k = strdup(key);
  SCHED_ASSERT(p->memo && k);
  p->memo[p->nmemo++] = (sched_memo){k, isl_ast_node_copy(ast), ndeps};
}

void sched_memo_free(sched_program *p) {
  for (int i = 0; i < p->nmemo; i++) free(p->memo[i].key), isl_ast_node_free(p->memo[i].ast);
  free(p->memo);
  p->memo = NULL, p->nmemo = 0;
}

isl_union_map *sched_read_umap(isl_ctx *ctx, const strbuf *b) {
  strbuf s = {0};
  sb_printf(&s, "{ %s}", b->s ? b->s : "");
  isl_union_map *m = isl_union_map_read_from_str(ctx, s.s);
  free(s.s);
  return m;
}

isl_union_map *sched_flow(__isl_keep isl_union_set *dom, __isl_take isl_union_map *sched,
                          __isl_take isl_union_map *reads, __isl_take isl_union_map *writes) {
  reads = isl_union_map_intersect_domain(reads, isl_union_set_copy(dom));
  writes = isl_union_map_intersect_domain(writes, isl_union_set_copy(dom));
  sched = isl_union_map_intersect_domain(sched, isl_union_set_copy(dom));
  isl_union_access_info *ai = isl_union_access_info_from_sink(reads);
  ai = isl_union_access_info_set_must_source(ai, writes);
  ai = isl_union_access_info_set_schedule_map(ai, sched);
  isl_union_flow *flow = isl_union_access_info_compute_flow(ai);
  isl_union_map *dep = isl_union_flow_get_must_dependence(flow);
  isl_union_flow_free(flow);
  return dep;
}

/* Value-based dependences of the kernel in its semantic order (outer axes
 * in axis order), from isl's dataflow analysis; the schedule actually used
 * must order each dependence's source before its sink. Returns 1 legal, 0
 * not, -1 on an isl error. */
static int schedule_is_legal(isl_ctx *ctx, model *used, model *semantic, isl_union_set *dom,
                             int *ndeps) {
  isl_union_map *dep = sched_flow(dom, sched_read_umap(ctx, &semantic->sch),
                                  sched_read_umap(ctx, &used->rd), sched_read_umap(ctx, &used->wr));
  isl_union_map *sched =
      isl_union_map_intersect_domain(sched_read_umap(ctx, &used->sch), isl_union_set_copy(dom));
  isl_union_map *before = isl_union_map_lex_lt_union_map(isl_union_map_copy(sched), sched);
  *ndeps = dep ? (int)isl_union_map_n_map(dep) : 0;
  isl_bool ok = isl_union_map_is_subset(dep, before);
  isl_union_map_free(dep);
  isl_union_map_free(before);
  return ok < 0 ? -1 : ok == isl_bool_true;
}

void sched_outer_sorted(const sched_kernel *k, int *sorted) {
  memcpy(sorted, k->outer, sizeof k->outer);
  for (int i = 1; i < k->nouter; i++)
    for (int j = i; j > 0 && sorted[j] < sorted[j - 1]; j--) {
      int t = sorted[j];
      sorted[j] = sorted[j - 1];
      sorted[j - 1] = t;
    }
}

int sched_kernel_build_ast(sched_program *p, sched_kernel *k, char *err, size_t errlen) {
  model used = {.p = p}, semantic = {.p = p};
  int sorted[IR_MAX_RANK];
  sched_outer_sorted(k, sorted);
  int root_rank = ir_node_get(p->g, k->root)->shape.rank;
  kernel_model(&used, k, k->outer, root_rank);
  kernel_model(&semantic, k, sorted, root_rank);
  strbuf key = {0};
  sb_printf(&key, "%s|%s|%s|%s|%s", used.dom.s, used.sch.s, used.rd.s ? used.rd.s : "", used.wr.s,
            semantic.sch.s);
  int rc = 0;
  k->ast = sched_memo_get(p, key.s, &k->ndeps);
  if (!k->ast) {
    strbuf ds = {0};
    sched_isl_params(p, k, &ds);
    sb_printf(&ds, "{ %s}", used.dom.s);
    isl_union_set *d = isl_union_set_read_from_str(p->ctx, ds.s);
    free(ds.s);
    isl_union_map *m = d ? isl_union_map_intersect_domain(sched_read_umap(p->ctx, &used.sch),
                                                          isl_union_set_copy(d))
                         : NULL;
    int legal = d && m ? schedule_is_legal(p->ctx, &used, &semantic, d, &k->ndeps) : -1;
    if (!d || !m || legal < 0) {
      rc = -1;
      snprintf(err, errlen, "internal: isl rejected the model of kernel %%%d: { %s} / { %s}",
               k->root, used.dom.s, used.sch.s);
    } else if (!legal) {
      rc = -1;
      snprintf(err, errlen, "internal: the schedule of kernel %%%d violates a dependence", k->root);
    } else {
      isl_ast_build *b = sched_ast_build(p, k);
      k->ast = isl_ast_build_node_from_schedule_map(b, isl_union_map_copy(m));
      isl_ast_build_free(b);
      if (!k->ast) {
        rc = -1;
        snprintf(err, errlen, "internal: isl could not build the loop nest of kernel %%%d",
                 k->root);
      } else {
        sched_memo_put(p, key.s, k->ast, k->ndeps);
      }
    }
    isl_union_map_free(m);
    isl_union_set_free(d);
  }
  free(key.s);
  strbuf *all[] = {&used.dom,     &used.sch,     &used.rd,     &used.wr,
                   &semantic.dom, &semantic.sch, &semantic.rd, &semantic.wr};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]->s);
  return rc;
}

void sched_dump(const sched_program *p, void *file) {
  FILE *f = file;
  char tgt[256];
  sched_target_describe(&p->opt.target, tgt, sizeof tgt);
  fprintf(f, "target %s\n", tgt);
  for (int i = 0; i < p->nkernels; i++) {
    const sched_kernel *k = &p->kernels[i];
    const ir_node *r = ir_node_get(p->g, k->root);
    fprintf(f, "kernel %d: %%%d %s%s (%s), %d buffers, %d reduction stages, %d dependences (checked)",
            i, k->root, ir_op_name(r->op), r->reduce ? ".reduce" : "", r->label ? r->label : "-",
            k->nargs, k->nstages, k->ndeps);
    if (k->gemm.on) fprintf(f, ", register block %d x %d", k->gemm.mr, k->gemm.nr);
    fprintf(f, "\n");
    char *c = isl_ast_node_to_C_str(k->ast);
    fprintf(f, "%s", c ? c : "");
    free(c);
  }
  fprintf(f, "arena: %lld bytes (naive sum %lld), weights: %lld bytes\n", (long long)p->arena_size,
          (long long)p->arena_naive, (long long)p->weights_size);
}

/* Graphviz: kernels as boxes (with their stages), graph inputs, weights and
 * outputs as ellipses, an edge per buffer a kernel reads or writes. */
void sched_dump_dot(const sched_program *p, void *file) {
  FILE *f = file;
  fprintf(f, "digraph kernels {\n  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n");
  for (int b = 0; b < p->nbufs; b++) {
    const sched_buf *x = &p->bufs[b];
    if (x->kind == SCHED_BUF_TEMP) continue;
    const ir_node *n = ir_node_get(p->g, x->node);
    const char *what = x->kind == SCHED_BUF_INPUT    ? "input"
                       : x->kind == SCHED_BUF_OUTPUT ? "output"
                                                     : "weight";
    char numel[128];
    ir_dim_str(x->numel, numel, sizeof numel); /* may be symbolic */
    fprintf(f, "  b%d [shape=ellipse, label=\"%s %s\\n%s x %s\"];\n", b, what,
            x->kind == SCHED_BUF_OUTPUT ? ir_output_name(p->g, x->io_index)
                                        : (n->name ? n->name : ""),
            numel, ir_dtype_name(x->dtype));
  }
  for (int i = 0; i < p->nkernels; i++) {
    const sched_kernel *k = &p->kernels[i];
    const ir_node *r = ir_node_get(p->g, k->root);
    fprintf(f, "  k%d [shape=box, label=\"k%d %s%s\\n", i, i, ir_op_name(r->op),
            r->reduce ? ".reduce" : "");
    for (const char *c = r->label ? r->label : ""; *c; c++)
      fputs(*c == '"' ? "\\\"" : (char[]){*c, 0}, f);
    fprintf(f, "\\n%d stages, %d buffers\"];\n", k->nstages, k->nargs);
  }
  for (int i = 0; i < p->nkernels; i++) {
    const sched_kernel *k = &p->kernels[i];
    for (int a = 0; a < k->nargs; a++) {
      int b = k->args[a];
      const sched_buf *x = &p->bufs[b];
      if (a == 0) {
        if (x->kind == SCHED_BUF_OUTPUT) fprintf(f, "  k%d -> b%d;\n", i, b);
      } else if (x->kind == SCHED_BUF_TEMP || x->kind == SCHED_BUF_OUTPUT) {
        for (int j = 0; j < p->nkernels; j++)
          if (p->kernels[j].out_buf == b) fprintf(f, "  k%d -> k%d;\n", j, i);
      } else {
        fprintf(f, "  b%d -> k%d;\n", b, i);
      }
    }
  }
  fprintf(f, "}\n");
}
