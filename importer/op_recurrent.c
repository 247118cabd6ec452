/* op_recurrent.c — RNN, GRU and LSTM unrolled over the (static) sequence
 * length onto IR primitives. */
#include "importer_impl.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---------- RNN / GRU / LSTM ---------- */

typedef struct {
  char name[24];
  double alpha, beta;
} actfn;

static ir_ref apply_act(ir_graph *g, const actfn *a, ir_ref x) {
  const char *s = a->name;
  if (!strcasecmp(s, "sigmoid")) return ir_sigmoid(g, x);
  if (!strcasecmp(s, "tanh")) return ir_tanh(g, x);
  if (!strcasecmp(s, "relu")) return ir_binary(g, IR_MAX, x, imp_k(g, x, 0));
  if (!strcasecmp(s, "affine")) return imp_add(g, imp_mul(g, x, imp_k(g, x, a->alpha)), imp_k(g, x, a->beta));
  if (!strcasecmp(s, "leakyrelu"))
    return ir_where(g, ir_binary(g, IR_LT, x, imp_k(g, x, 0)), imp_mul(g, x, imp_k(g, x, a->alpha)), x);
  if (!strcasecmp(s, "thresholdedrelu"))
    return ir_where(g, ir_binary(g, IR_LT, imp_k(g, x, a->alpha), x), x, imp_k(g, x, 0));
  if (!strcasecmp(s, "scaledtanh"))
    return imp_mul(g, ir_tanh(g, imp_mul(g, x, imp_k(g, x, a->beta))), imp_k(g, x, a->alpha));
  if (!strcasecmp(s, "hardsigmoid"))
    return imp_clamp(g, imp_add(g, imp_mul(g, x, imp_k(g, x, a->alpha)), imp_k(g, x, a->beta)), 0, 1);
  if (!strcasecmp(s, "softsign"))
    return imp_mul(g, x, ir_unary(g, IR_RECIP, imp_add(g, ir_abs(g, x), imp_k(g, x, 1))));
  if (!strcasecmp(s, "softplus")) return ir_log(g, imp_add(g, ir_exp(g, x), imp_k(g, x, 1)));
  if (!strcasecmp(s, "elu"))
    return ir_where(g, ir_binary(g, IR_LT, x, imp_k(g, x, 0)),
                    imp_mul(g, imp_add(g, ir_exp(g, x), imp_k(g, x, -1)), imp_k(g, x, a->alpha)), x);
  return ir_fail(g, "activation %s is not supported", s), IR_NONE;
}

static void act_defaults(actfn *a) {
  const char *s = a->name;
  a->alpha = 0, a->beta = 0;
  if (!strcasecmp(s, "leakyrelu")) a->alpha = 0.01;
  else if (!strcasecmp(s, "hardsigmoid")) a->alpha = 0.2, a->beta = 0.5;
  else if (!strcasecmp(s, "elu") || !strcasecmp(s, "scaledtanh") || !strcasecmp(s, "affine") ||
           !strcasecmp(s, "thresholdedrelu"))
    a->alpha = 1.0, a->beta = !strcasecmp(s, "scaledtanh") ? 1.0 : 0.0;
}

/* Reads the `activations` attribute (nper per direction) into acts[]. */
static int read_acts(imp_node *n, int ndir, int nper, const char *const *defs, actfn *acts) {
  const Onnx__AttributeProto *at = imp_attr(n, "activations"); /* an attribute may have no name */
  for (int d = 0; d < ndir; d++)
    for (int j = 0; j < nper; j++) {
      actfn *a = &acts[d * nper + j];
      snprintf(a->name, sizeof a->name, "%s", defs[j]);
      act_defaults(a);
    }
  if (!at) return 0;
  if ((int)at->n_strings != ndir * nper)
    return imp_fail(n, "activations has %d entries, expected %d", (int)at->n_strings, ndir * nper);
  double al[16], be[16];
  int na = imp_attr_floats(n, "activation_alpha", al, 16);
  int nb = imp_attr_floats(n, "activation_beta", be, 16);
  for (int i = 0; i < ndir * nper; i++) {
    size_t len = at->strings[i].len < 23 ? at->strings[i].len : 23;
    memcpy(acts[i].name, at->strings[i].data, len);
    acts[i].name[len] = 0;
    act_defaults(&acts[i]);
    if (i < na) acts[i].alpha = al[i];
    if (i < nb) acts[i].beta = be[i];
  }
  return 0;
}

typedef enum { CELL_RNN, CELL_GRU, CELL_LSTM } cell_kind;

/* Tensors of one direction. */
typedef struct {
  ir_ref xw;   /* [T, B, G*H]: X W^T + Wb + (Rb except GRU's h gate) */
  ir_ref rt;   /* [H, G*H] */
  ir_ref rbh;  /* GRU: Rb of the h gate [H] */
  ir_ref p[3]; /* LSTM peepholes i, o, f [H] */
  ir_ref h, c; /* states [B, H] */
} dirdata;

/* x[..., gate*H : (gate+1)*H] of the last axis. */
static ir_ref gate(ir_graph *g, ir_ref x, int gi, int64_t H) {
  return imp_take(g, x, imp_gshape(g, x).rank - 1, gi * H, H);
}

static ir_ref clip_gate(ir_graph *g, ir_ref x, double clip) {
  return clip > 0 ? imp_clamp(g, x, -clip, clip) : x;
}

/* One time step of the cell; updates dd->h (and dd->c). */
static void cell_step(ir_graph *g, cell_kind kind, dirdata *dd, ir_ref xt, int64_t H,
                      const actfn *a, double clip, bool lbr, bool coupled) {
  ir_ref hr = ir_matmul(g, dd->h, dd->rt); /* [B, G*H] */
  if (kind == CELL_RNN) {
    dd->h = apply_act(g, &a[0], clip_gate(g, imp_add(g, xt, hr), clip));
  } else if (kind == CELL_GRU) {
    ir_ref z = apply_act(g, &a[0], clip_gate(g, imp_add(g, gate(g, xt, 0, H), gate(g, hr, 0, H)), clip));
    ir_ref r = apply_act(g, &a[0], clip_gate(g, imp_add(g, gate(g, xt, 1, H), gate(g, hr, 1, H)), clip));
    ir_ref hh;
    if (lbr) {
      hh = imp_mul(g, r, imp_add(g, gate(g, hr, 2, H), dd->rbh));
    } else {
      ir_ref rh = imp_take(g, dd->rt, 1, 2 * H, H);
      hh = imp_add(g, ir_matmul(g, imp_mul(g, r, dd->h), rh), dd->rbh);
    }
    ir_ref ht = apply_act(g, &a[1], clip_gate(g, imp_add(g, gate(g, xt, 2, H), hh), clip));
    ir_ref one = imp_k(g, z, 1);
    dd->h = imp_add(g, imp_mul(g, ir_sub(g, one, z), ht), imp_mul(g, z, dd->h));
  } else {
    ir_ref s = imp_add(g, xt, hr);
    ir_ref gi = gate(g, s, 0, H), go = gate(g, s, 1, H), gf = gate(g, s, 2, H), gc = gate(g, s, 3, H);
    if (dd->p[0] != IR_NONE) gi = imp_add(g, gi, imp_mul(g, dd->p[0], dd->c));
    if (dd->p[2] != IR_NONE) gf = imp_add(g, gf, imp_mul(g, dd->p[2], dd->c));
    ir_ref i = apply_act(g, &a[0], clip_gate(g, gi, clip));
    ir_ref f = coupled ? ir_sub(g, imp_k(g, i, 1), i) : apply_act(g, &a[0], clip_gate(g, gf, clip));
    ir_ref ct = apply_act(g, &a[1], clip_gate(g, gc, clip));
    dd->c = imp_add(g, imp_mul(g, f, dd->c), imp_mul(g, i, ct));
    if (dd->p[1] != IR_NONE) go = imp_add(g, go, imp_mul(g, dd->p[1], dd->c));
    ir_ref o = apply_act(g, &a[0], clip_gate(g, go, clip));
    dd->h = imp_mul(g, o, apply_act(g, &a[2], dd->c));
  }
}

/* Row `d` of a [D, ...] input, as [...]. */
static ir_ref dir_row(ir_graph *g, ir_ref v, int d) {
  if (v == IR_NONE) return IR_NONE;
  return ir_view_squeeze(g, imp_take(g, v, 0, d, 1), 0);
}

static int lower_recurrent(imp_node *n, cell_kind kind) {
  ir_graph *g = n->g;
  static const char *const defs[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
  const int ngates = kind == CELL_RNN ? 1 : kind == CELL_GRU ? 3 : 4;
  const int nacts = kind == CELL_RNN ? 1 : kind == CELL_GRU ? 2 : 3;
  ir_ref x = imp_req(n, 0), W = imp_req(n, 1), R = imp_req(n, 2), B = imp_in(n, 3), sl = imp_in(n, 4);
  ir_ref h0 = imp_in(n, 5), c0 = kind == CELL_LSTM ? imp_in(n, 6) : IR_NONE;
  ir_ref P = kind == CELL_LSTM ? imp_in(n, 7) : IR_NONE;
  if (ir_failed(g)) return -1;
  /* the weights, biases and peepholes; the batch of x, sequence_lens and
   * the initial states may be symbolic */
  int wts[4] = {1, 2, 3, 7};
  for (int i = 0; i < 4; i++)
    if (imp_need_static(n, wts[i])) return -1;
  ir_dtype dt = imp_gdtype(g, x);
  if (!ir_dtype_is_float(dt) || dt == IR_F16) return imp_fail(n, "input type %s is not supported", ir_dtype_name(dt));
  const char *dir = imp_attr_s(n, "direction", "forward");
  int ndir = !strcmp(dir, "bidirectional") ? 2 : 1;
  bool reverse0 = !strcmp(dir, "reverse");
  if (ndir == 1 && !reverse0 && strcmp(dir, "forward")) return imp_fail(n, "direction=%s is not supported", dir);
  int64_t layout = imp_attr_i(n, "layout", 0);
  double clip = imp_attr_f(n, "clip", 0);
  bool lbr = imp_attr_i(n, "linear_before_reset", 0) != 0;
  bool coupled = imp_attr_i(n, "input_forget", 0) != 0;
  actfn acts[6];
  if (read_acts(n, ndir, nacts, defs[kind], acts)) return -1;
  if (layout) {
    int perm3[3] = {1, 0, 2};
    x = ir_view_permute(g, x, perm3);
    if (h0 != IR_NONE) h0 = ir_view_permute(g, h0, perm3);
    if (c0 != IR_NONE) c0 = ir_view_permute(g, c0, perm3);
  }
  ir_shape xs = imp_gshape(g, x);
  int64_t T = xs.d[0], Bn = xs.d[1], H = imp_gshape(g, R).d[2];
  if (ir_dim_is_sym(T)) return imp_fail_sym(n, T, "a symbolic sequence length (the steps are unrolled)");
  if (imp_has_attr(n, "hidden_size") && imp_attr_i(n, "hidden_size", H) != H)
    return imp_fail(n, "hidden_size disagrees with R");
  /* per-batch step mask from sequence_lens: step t is live when t < len[b] */
  ir_ref lens = sl != IR_NONE ? ir_view_reshape(g, ir_cast(g, sl, IR_I64), (ir_shape){.rank = 2, .d = {Bn, 1}}) : IR_NONE;
  int perm2[2] = {1, 0};
  ir_ref ys[2][256], yh[2], yc[2];
  if (T > 256) return imp_fail(n, "sequence length %lld is too long to unroll", (long long)T);
  ir_ref zero_state = ir_load(g, dt, (ir_shape){.rank = 2, .d = {Bn, H}}, 0.0);
  for (int d = 0; d < ndir; d++) {
    bool rev = reverse0 || d == 1;
    dirdata dd;
    ir_ref wd = dir_row(g, W, d), bd = dir_row(g, B, d);
    dd.rt = ir_view_permute(g, dir_row(g, R, d), perm2);
    dd.xw = ir_matmul(g, x, ir_view_permute(g, wd, perm2));
    dd.rbh = IR_NONE;
    if (bd != IR_NONE) {
      ir_ref wb = imp_take(g, bd, 0, 0, ngates * H), rb = imp_take(g, bd, 0, ngates * H, ngates * H);
      if (kind == CELL_GRU) {
        dd.rbh = imp_take(g, rb, 0, 2 * H, H);
        rb = imp_pad_crop(g, imp_take(g, rb, 0, 0, 2 * H), 0, 0, H);
      }
      dd.xw = imp_add(g, dd.xw, imp_add(g, wb, rb));
    } else if (kind == CELL_GRU) {
      dd.rbh = ir_load(g, dt, (ir_shape){.rank = 1, .d = {H}}, 0.0);
    }
    ir_ref pd = dir_row(g, P, d);
    for (int j = 0; j < 3; j++) dd.p[j] = pd != IR_NONE ? imp_take(g, pd, 0, j * H, H) : IR_NONE;
    dd.h = h0 != IR_NONE ? dir_row(g, h0, d) : zero_state;
    dd.c = c0 != IR_NONE ? dir_row(g, c0, d) : zero_state;
    for (int64_t step = 0; step < T; step++) {
      int64_t t = rev ? T - 1 - step : step;
      ir_ref xt = ir_view_squeeze(g, imp_take(g, dd.xw, 0, t, 1), 0);
      ir_ref hp = dd.h, cp = dd.c;
      cell_step(g, kind, &dd, xt, H, &acts[d * nacts], clip, lbr, coupled);
      ir_ref out = dd.h;
      if (lens != IR_NONE) {
        ir_ref live = ir_binary(g, IR_LT, ir_scalar(g, IR_I64, (double)t), lens);
        dd.h = ir_where(g, live, dd.h, hp);
        if (kind == CELL_LSTM) dd.c = ir_where(g, live, dd.c, cp);
        out = ir_where(g, live, out, imp_k(g, out, 0));
      }
      ys[d][t] = ir_view_unsqueeze(g, ir_view_unsqueeze(g, out, 0), 0); /* [1, 1, B, H] */
    }
    yh[d] = ir_view_unsqueeze(g, dd.h, 0);
    yc[d] = ir_view_unsqueeze(g, dd.c, 0);
    if (ir_failed(g)) return -1;
  }
  int perm4[4] = {2, 0, 1, 3};
  int perm3[3] = {1, 0, 2};
  if (imp_has_out(n, 0)) {
    ir_ref per_dir[2];
    for (int d = 0; d < ndir; d++) per_dir[d] = imp_stack(g, ys[d], (int)T, 0);
    ir_ref y = ndir == 1 ? per_dir[0] : imp_stack(g, per_dir, 2, 1); /* [T, D, B, H] */
    if (layout) y = ir_view_permute(g, y, perm4);                 /* [B, T, D, H] */
    if (imp_set_out(n, 0, y)) return -1;
  }
  ir_ref fh = ndir == 1 ? yh[0] : imp_stack(g, yh, 2, 0);
  ir_ref fc = ndir == 1 ? yc[0] : imp_stack(g, yc, 2, 0);
  if (layout) fh = ir_view_permute(g, fh, perm3), fc = ir_view_permute(g, fc, perm3);
  if (imp_has_out(n, 1) && imp_set_out(n, 1, fh)) return -1;
  if (kind == CELL_LSTM && imp_has_out(n, 2) && imp_set_out(n, 2, fc)) return -1;
  return 0;
}

static int lower_rnn(imp_node *n) {
  return lower_recurrent(n, CELL_RNN);
}
static int lower_gru(imp_node *n) {
  return lower_recurrent(n, CELL_GRU);
}
static int lower_lstm(imp_node *n) {
  return lower_recurrent(n, CELL_LSTM);
}


const imp_op_entry imp_ops_recurrent[] = {
    {"RNN", lower_rnn, IMP_SYM},
    {"GRU", lower_gru, IMP_SYM},
    {"LSTM", lower_lstm, IMP_SYM},
    {NULL, NULL, 0},
};
