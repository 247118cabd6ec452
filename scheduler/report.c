/* report.c — what each kernel costs (--report FILE.json, the table of -v).
 *
 * FLOPs count the float operations a kernel's statements perform as the
 * generated code performs them: each reduction stage's expression and its
 * accumulation once per point of the iteration space, the final statement
 * once per point of its domain; a value shared inside one statement is
 * counted once (the code binds it to a local). A matmul is therefore
 * exactly 2*M*N*K. Bytes are compulsory traffic: every buffer a kernel
 * reads counted once, and the buffer it writes. Symbolic sizes print as
 * their polynomial (a JSON string). */
#include "sched_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const sched_program *p;
  const sched_kernel *k;
  int *seen, stamp;      /* per node: the statement that counted it */
  const char **labels;   /* distinct ONNX node names of the kernel */
  int nlabels;
} walk;

static bool is_flop(const ir_graph *g, const ir_node *n) {
  switch (n->op) {
  case IR_NEG: case IR_RECIP: case IR_SQRT: case IR_EXP2: case IR_LOG2: case IR_SIN:
  case IR_ADD: case IR_MUL: case IR_MAX: case IR_IDIV: case IR_MOD: case IR_LT: case IR_NEQ:
    return ir_dtype_is_float(ir_node_get(g, n->src[0])->dtype);
  default: return false;
  }
}

static void add_label(walk *w, const char *s) {
  if (!s) return;
  for (int i = 0; i < w->nlabels; i++)
    if (!strcmp(w->labels[i], s)) return;
  w->labels[w->nlabels++] = s;
}

/* Float operations of statement value `r` (stopping at buffers and at the
 * kernel's other stages). Inline expressions are at most 64 deep (fuse.c),
 * which bounds the recursion. */
static int64_t ops(walk *w, ir_ref r, ir_ref start) {
  if (r != start && (w->p->buf_of[r] >= 0 || sched_stage_of(w->k, r) >= 0)) return 0;
  if (w->seen[r] == w->stamp) return 0;
  w->seen[r] = w->stamp;
  const ir_node *n = ir_node_get(w->p->g, r);
  add_label(w, n->label);
  int64_t c = is_flop(w->p->g, n);
  for (int i = 0; i < n->nsrc; i++) c += ops(w, n->src[i], start);
  return c;
}

/* The iterations of the loops over `axes` (a collapsed loop: its product). */
static int64_t numel_over(const sched_kernel *k, const int *axes, int n) {
  int64_t e = 1;
  for (int i = 0; i < n; i++) e = ir_dim_mul(e, k->extent[axes[i]]);
  return e;
}

static int64_t buf_bytes(const sched_buf *b) {
  return ir_dim_mul(b->numel, (int64_t)ir_dtype_size(b->dtype));
}

typedef struct {
  int64_t flops, read, written;
} cost;

static cost kernel_cost(walk *w, const sched_kernel *k) {
  cost c = {0, 0, 0};
  w->k = k;
  w->nlabels = 0;
  int64_t full = ir_shape_numel(&k->space);
  for (int s = 0; s < k->nstages; s++) {
    w->stamp++;
    c.flops = ir_dim_add(c.flops, ir_dim_mul(ops(w, k->stages[s], k->stages[s]), full));
  }
  w->stamp++;
  int64_t fin = ops(w, k->root, sched_stage_of(k, k->root) >= 0 ? IR_NONE : k->root);
  c.flops = ir_dim_add(c.flops, ir_dim_mul(fin, k->final_full ? full : numel_over(k, k->outer, k->nouter)));
  c.written = buf_bytes(&w->p->bufs[k->out_buf]);
  for (int a = 0; a < k->nargs; a++)
    if (k->args[a] != k->out_buf) c.read = ir_dim_add(c.read, buf_bytes(&w->p->bufs[k->args[a]]));
  return c;
}

/* `s` as a JSON string. */
static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
    else if (ch < 32 || ch == 127) fprintf(f, "\\u%04x", ch);
    else fputc(ch, f);
  }
  fputc('"', f);
}

/* A size: a number, or its polynomial as a string. */
static void json_dim(FILE *f, int64_t d) {
  if (!ir_dim_is_sym(d)) {
    fprintf(f, "%lld", (long long)d);
    return;
  }
  char s[512];
  ir_dim_str(d, s, sizeof s);
  json_str(f, s);
}

static walk walk_new(const sched_program *p) {
  walk w = {p, NULL, calloc((size_t)ir_graph_count(p->g) + 1, sizeof(int)), 0,
            calloc((size_t)ir_graph_count(p->g) + 1, sizeof(char *)), 0};
  if (!w.seen || !w.labels) abort();
  return w;
}

static void walk_free(walk *w) {
  free(w->seen);
  free(w->labels);
}

void sched_kernel_cost(const sched_program *p, const sched_kernel *k, int64_t *flops,
                       int64_t *bytes) {
  walk w = walk_new(p);
  cost c = kernel_cost(&w, k);
  walk_free(&w);
  *flops = c.flops, *bytes = ir_dim_add(c.read, c.written);
}

int sched_report_json(const sched_program *p, void *file) {
  FILE *f = file;
  walk w = walk_new(p);
  int64_t flops = 0, read = 0, written = 0;
  fprintf(f, "{\n  \"kernels\": [");
  for (int i = 0; i < p->nkernels; i++) {
    const sched_kernel *k = &p->kernels[i];
    cost c = kernel_cost(&w, k);
    flops = ir_dim_add(flops, c.flops), read = ir_dim_add(read, c.read), written = ir_dim_add(written, c.written);
    const sched_buf *out = &p->bufs[k->out_buf];
    char sh[512];
    ir_shape_str(&k->space, sh, sizeof sh);
    fprintf(f, "%s\n    {\"index\": %d, \"op\": \"%s%s\", \"onnx_nodes\": [", i ? "," : "", i,
            ir_op_name(ir_node_get(p->g, k->root)->op), ir_node_get(p->g, k->root)->reduce ? ".reduce" : "");
    for (int l = 0; l < w.nlabels; l++) {
      if (l) fprintf(f, ", ");
      json_str(f, w.labels[l]);
    }
    fprintf(f, "],\n     \"space\": ");
    json_str(f, sh);
    fprintf(f, ", \"outer_axes\": [");
    for (int a = 0; a < k->nouter; a++) fprintf(f, "%s%d", a ? ", " : "", k->outer[a]);
    fprintf(f, "], \"reduced_axes\": [");
    for (int a = 0; a < k->nred; a++) fprintf(f, "%s%d", a ? ", " : "", k->red[a]);
    fprintf(f, "], \"stages\": %d, \"register_block\": ", k->nstages);
    if (k->gemm.on) fprintf(f, "[%d, %d]", k->gemm.mr, k->gemm.nr);
    else fprintf(f, "null");
    fprintf(f, ",\n     \"flops\": ");
    json_dim(f, c.flops);
    fprintf(f, ", \"bytes_read\": ");
    json_dim(f, c.read);
    fprintf(f, ", \"bytes_written\": ");
    json_dim(f, c.written);
    fprintf(f, ", \"output\": \"%s\"", out->kind == SCHED_BUF_TEMP ? "arena" : "output");
    if (out->kind == SCHED_BUF_TEMP) {
      fprintf(f, ", \"arena_offset\": ");
      if (p->symbolic) fprintf(f, "null"); /* computed at run time (o2c_plan) */
      else fprintf(f, "%lld", (long long)out->offset);
      fprintf(f, ", \"arena_size\": ");
      json_dim(f, c.written);
    }
    char *nest = k->ast ? isl_ast_node_to_C_str(k->ast) : NULL;
    fprintf(f, ",\n     \"loop_nest\": ");
    json_str(f, nest);
    free(nest);
    fprintf(f, "}");
  }
  fprintf(f, "\n  ],\n  \"total\": {\"kernels\": %d, \"flops\": ", p->nkernels);
  json_dim(f, flops);
  fprintf(f, ", \"bytes_read\": ");
  json_dim(f, read);
  fprintf(f, ", \"bytes_written\": ");
  json_dim(f, written);
  fprintf(f, ", \"weight_bytes\": %lld, \"arena_bytes\": %lld, \"arena_at_reference_point\": %s}\n}\n",
          (long long)p->weights_size, (long long)p->arena_size, p->symbolic ? "true" : "false");
  walk_free(&w);
  return ferror(f) ? -1 : 0;
}

void sched_report_table(const sched_program *p, void *file) {
  FILE *f = file;
  walk w = walk_new(p);
  fprintf(f, "%6s %-14s %14s %12s %12s %10s  %s\n", "kernel", "op", "FLOPs", "read B", "written B", "arena off",
          "ONNX nodes");
  for (int i = 0; i < p->nkernels; i++) {
    const sched_kernel *k = &p->kernels[i];
    cost c = kernel_cost(&w, k);
    char fl[64], rd[64], wr[64], off[32] = "-", names[64] = "";
    ir_dim_str(c.flops, fl, sizeof fl), ir_dim_str(c.read, rd, sizeof rd), ir_dim_str(c.written, wr, sizeof wr);
    if (p->bufs[k->out_buf].kind == SCHED_BUF_TEMP && !p->symbolic)
      snprintf(off, sizeof off, "%lld", (long long)p->bufs[k->out_buf].offset);
    size_t at = 0; /* the first node's name, cut, printable */
    for (const char *s = w.nlabels ? w.labels[0] : ""; *s && at + 1 < sizeof names; s++)
      names[at++] = (unsigned char)*s < 32 || *s == 127 ? '?' : *s;
    names[at] = 0;
    const ir_node *r = ir_node_get(p->g, k->root);
    fprintf(f, "%6d %-7s%-7s %14s %12s %12s %10s  %s%s\n", i, ir_op_name(r->op), r->reduce ? ".reduce" : "", fl, rd,
            wr, off, names, w.nlabels > 1 ? " and more" : "");
  }
  walk_free(&w);
}
