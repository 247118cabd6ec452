/* op_shape.c — lowering of the shape op family: views (reshape, permute,
 * slice, expand, pad) and assembly of views by padding and adding. */
#include "importer_impl.h"

#include <limits.h>
#include <string.h>

/* A copy of the shape of `r` (rank 0 when r is IR_NONE). */
static ir_shape shape_of(imp_node *n, ir_ref r) {
  ir_shape s = {0};
  if (r != IR_NONE) s = *imp_shape(n, r);
  return s;
}

/* Integer values either from input `i` (when `from_input`) or from the
 * attribute `name`; returns the count, -1 when absent (no error) or -2 on
 * error. ints_arg_dims accepts symbolic values (sizes, slice bounds). */
static int ints_arg_any(imp_node *n, bool from_input, int i, const char *name, int64_t *out, int max, bool dims) {
  if (from_input) {
    if (!imp_has_in(n, i)) return -1;
    int c = dims ? imp_const_dims(n, i, out, max) : imp_const_ints(n, i, out, max);
    return c < 0 ? -2 : c;
  }
  if (!imp_has_attr(n, name)) return -1;
  int c = imp_attr_ints(n, name, out, max);
  return c < 0 ? -2 : c;
}

static int ints_arg(imp_node *n, bool from_input, int i, const char *name, int64_t *out, int max) {
  return ints_arg_any(n, from_input, i, name, out, max, false);
}

static int ints_arg_dims(imp_node *n, bool from_input, int i, const char *name, int64_t *out, int max) {
  return ints_arg_any(n, from_input, i, name, out, max, true);
}

/* Normalises `cnt` axes against `rank` into a bitmask; false on error or a
 * repeated axis. */
static bool axes_mask(imp_node *n, const int64_t *axes, int cnt, int rank, uint32_t *mask) {
  *mask = 0;
  for (int i = 0; i < cnt; i++) {
    int a = imp_axis(n, axes[i], rank);
    if (a < 0) return false;
    if (*mask & (1u << a)) return imp_fail(n, "axis %lld is repeated", (long long)axes[i]), false;
    *mask |= 1u << a;
  }
  return true;
}

/* The accumulation used to assemble disjoint padded pieces. */
static ir_ref combine(ir_graph *g, ir_ref a, ir_ref b) {
  if (a == IR_NONE) return b;
  if (b == IR_NONE) return a;
  bool is_bool = ir_node_get(g, a)->dtype == IR_BOOL;
  return ir_binary(g, is_bool ? IR_OR : IR_ADD, a, b);
}

/* Concatenation along `axis`: each piece is padded with zeros to the full
 * extent and the pieces are summed (ORed for bool), so it stays primitives. */
ir_ref imp_concat(imp_node *n, const ir_ref *parts, int cnt, int axis) {
  ir_graph *g = n->g;
  if (cnt <= 0) return imp_fail(n, "nothing to concatenate"), IR_NONE;
  ir_shape out = shape_of(n, parts[0]);
  int64_t total = 0; /* may be symbolic (a KV cache: past + 1) */
  for (int i = 0; i < cnt; i++) {
    ir_shape s = shape_of(n, parts[i]);
    if (s.rank != out.rank) return imp_fail(n, "concatenated inputs have different ranks"), IR_NONE;
    for (int k = 0; k < s.rank; k++)
      if (k != axis && s.d[k] != out.d[k] &&
          ((!ir_dim_is_sym(s.d[k]) && !ir_dim_is_sym(out.d[k])) || ir_dim_unify(g, out.d[k], s.d[k])))
        return imp_fail(n, "concatenated inputs differ on axis %d", k), IR_NONE;
    if (imp_dtype(n, parts[i]) != imp_dtype(n, parts[0]))
      return imp_fail(n, "concatenated inputs have different dtypes"), IR_NONE;
    total = ir_dim_add(total, s.d[axis]);
  }
  out.d[axis] = total;
  if (ir_shape_numel(&out) == 0) return ir_load(g, imp_dtype(n, parts[0]), out, 0);
  ir_ref acc = IR_NONE;
  int64_t at = 0;
  for (int i = 0; i < cnt; i++) {
    int64_t d = shape_of(n, parts[i]).d[axis];
    if (d == 0) continue;
    int64_t before[IR_MAX_RANK] = {0}, after[IR_MAX_RANK] = {0};
    before[axis] = at;
    after[axis] = ir_dim_sub(ir_dim_sub(total, at), d);
    acc = combine(g, acc, ir_view_pad(g, parts[i], before, after, 0));
    at = ir_dim_add(at, d);
  }
  return acc;
}

/* The sub-range [start, start+len) of `x` along `axis` with `step`. */
static ir_ref slice_axis(ir_graph *g, ir_ref x, int axis, int64_t start, int64_t step, int64_t len) {
  const ir_node *nx = ir_node_get(g, x);
  if (!nx) return IR_NONE;
  int64_t st[IR_MAX_RANK], sp[IR_MAX_RANK], ln[IR_MAX_RANK];
  for (int k = 0; k < nx->shape.rank; k++) st[k] = 0, sp[k] = 1, ln[k] = nx->shape.d[k];
  st[axis] = start;
  sp[axis] = step;
  ln[axis] = len;
  return ir_view_slice(g, x, st, sp, ln);
}

static int lower_reshape(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  int64_t sh[IR_MAX_RANK];
  int cnt = ints_arg_dims(n, n->opset >= 5, 1, "shape", sh, IR_MAX_RANK);
  if (cnt == -1) return imp_fail(n, "the target shape is missing");
  if (cnt < 0) return -1;
  bool allowzero = imp_attr_i(n, "allowzero", 0) != 0;
  ir_shape s = shape_of(n, x), o = {.rank = cnt};
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < cnt; i++) {
    int64_t d = sh[i];
    if (d == 0 && !allowzero) {
      if (i >= s.rank) return imp_fail(n, "shape entry %d is 0 but the input has rank %d", i, s.rank);
      d = s.d[i];
    }
    if (d == -1) {
      if (infer >= 0) return imp_fail(n, "more than one -1 in the target shape");
      infer = i;
      continue;
    }
    if (!ir_dim_is_sym(d) && d < 0) return imp_fail(n, "invalid target dimension %lld", (long long)d);
    if (ir_dim_is_sym(d) || ir_dim_is_sym(known)) known = ir_dim_mul(known, d);
    else if (d && known > INT64_MAX / d) return imp_fail(n, "the target shape's size overflows");
    else known *= d;
    o.d[i] = d;
  }
  if (infer >= 0) {
    int64_t total = ir_shape_numel(&s), q;
    if (known == 0 || !ir_dim_div_exact(total, known, &q)) {
      char a[96], b[96];
      ir_dim_str(total, a, sizeof a);
      ir_dim_str(known, b, sizeof b);
      return imp_fail(n, "cannot infer the -1 dimension (%s elements, %s in the other dimensions)", a, b);
    }
    o.d[infer] = q;
  }
  return imp_set_out(n, 0, ir_view_reshape(n->g, x, o));
}

static int lower_transpose(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  int rank = shape_of(n, x).rank;
  int64_t p[IR_MAX_RANK];
  int perm[IR_MAX_RANK];
  int cnt = -1;
  if (imp_has_attr(n, "perm") && (cnt = imp_attr_ints(n, "perm", p, IR_MAX_RANK)) < 0) return -1;
  if (cnt >= 0 && cnt != rank) return imp_fail(n, "perm has %d entries for rank %d", cnt, rank);
  for (int i = 0; i < rank; i++) {
    perm[i] = cnt < 0 ? rank - 1 - i : (int)p[i];
    if (perm[i] < 0 || perm[i] >= rank) return imp_fail(n, "invalid perm");
  }
  return imp_set_out(n, 0, ir_view_permute(n->g, x, perm));
}

static int lower_unsqueeze(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  int64_t ax[IR_MAX_RANK];
  int cnt = ints_arg(n, n->opset >= 13, 1, "axes", ax, IR_MAX_RANK);
  if (cnt == -1) return imp_fail(n, "axes are missing");
  if (cnt < 0) return -1;
  ir_shape s = shape_of(n, x), o = {.rank = s.rank + cnt};
  if (o.rank > IR_MAX_RANK) return imp_fail(n, "rank %d is too high", o.rank);
  uint32_t mask;
  if (!axes_mask(n, ax, cnt, o.rank, &mask)) return -1;
  for (int i = 0, k = 0; i < o.rank; i++) o.d[i] = mask & (1u << i) ? 1 : s.d[k++];
  return imp_set_out(n, 0, ir_view_reshape(n->g, x, o));
}

static int lower_squeeze(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  int64_t ax[IR_MAX_RANK];
  int cnt = ints_arg(n, n->opset >= 13, 1, "axes", ax, IR_MAX_RANK);
  if (cnt == -2) return -1;
  ir_shape s = shape_of(n, x);
  uint32_t mask = 0;
  if (cnt < 0) {
    /* which axes are 1 must be known now: a symbol may be 1 at run time */
    int k = ir_shape_first_sym(&s);
    if (k >= 0)
      return imp_fail(n, "without axes, which dimensions are 1 depends on symbol '%s' at run time; give it a value with --dim %s=N",
                      ir_dim_sym_name(k), ir_dim_sym_name(k));
    for (int i = 0; i < s.rank; i++)
      if (s.d[i] == 1) mask |= 1u << i;
  } else if (!axes_mask(n, ax, cnt, s.rank, &mask)) {
    return -1;
  }
  return imp_set_out(n, 0, ir_squeeze_axes(n->g, x, mask));
}

static int lower_concat(imp_node *n) {
  ir_ref parts[64];
  int cnt = 0;
  if (imp_nin(n) > 64) return imp_fail(n, "too many inputs (%d)", imp_nin(n));
  for (int i = 0; i < imp_nin(n); i++) {
    if (!imp_has_in(n, i)) continue;
    if ((parts[cnt++] = imp_req(n, i)) == IR_NONE) return -1;
  }
  if (!cnt) return imp_fail(n, "no inputs");
  if (!imp_has_attr(n, "axis")) return imp_fail(n, "attribute 'axis' is required");
  int axis = imp_axis(n, imp_attr_i(n, "axis", 0), shape_of(n, parts[0]).rank);
  if (axis < 0) return -1;
  return imp_set_out(n, 0, imp_concat(n, parts, cnt, axis));
}

/* numpy-style clamping of one slice axis of size d: start, length. */
static void clamp_slice(int64_t d, int64_t s, int64_t e, int64_t step, int64_t *start,
                        int64_t *len) {
  if (s < 0) s = s < -d ? -1 : s + d;
  if (e < 0) e = e < -d ? -1 : e + d;
  if (step > 0) {
    s = s < 0 ? 0 : s > d ? d : s;
    e = e < 0 ? 0 : e > d ? d : e;
    /* ceil((e - s) / step) without forming e - s + step - 1, which
     * overflows for a step near INT64_MAX (ONNX: one element) */
    *len = e > s ? (int64_t)((uint64_t)(e - s - 1) / (uint64_t)step) + 1 : 0;
  } else {
    s = s < 0 ? -1 : s > d - 1 ? d - 1 : s;
    e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
    /* |step| as unsigned: -INT64_MIN does not fit an int64 */
    *len = s > e ? (int64_t)((uint64_t)(s - e - 1) / (0 - (uint64_t)step)) + 1 : 0;
  }
  *start = *len ? s : 0;
}

/* Is a < b? 1 or 0 when the graph can tell; otherwise `assume` is taken as
 * the answer and recorded as an assumption the generated code checks at
 * run time (-1 on error). The assumed answer is always the one where the
 * bound is in range, e.g. an end `seq` on an axis of 64 is not clamped
 * when seq <= 64. */
static int lt_or_assume(imp_node *n, int64_t a, int64_t b, bool assume) {
  unsigned c = ir_dim_cmp(n->g, a, b);
  if (c == IR_CMP_LT) return 1;
  if (!(c & IR_CMP_LT)) return 0;
  ir_assume_nonneg(n->g, assume ? ir_dim_sub(ir_dim_sub(b, a), 1) : ir_dim_sub(a, b), NULL);
  return ir_failed(n->g) ? -1 : assume;
}

/* clamp_slice when the axis size or a bound is symbolic (step +-1). */
static int clamp_slice_sym(imp_node *n, int64_t d, int64_t s, int64_t e, int64_t step, int64_t *start, int64_t *len) {
  int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? d : ir_dim_sub(d, 1);
  int64_t *v[2] = {&s, &e};
  if (step != 1 && step != -1)
    return imp_fail(n, "a slice with step %lld over a symbolic extent is not supported", (long long)step);
  for (int k = 0; k < 2; k++) {
    int neg = lt_or_assume(n, *v[k], 0, false);
    int under = neg == 1 ? lt_or_assume(n, *v[k], ir_dim_neg(d), false) : 0;
    if (neg < 0 || under < 0) return -1;
    if (neg) *v[k] = under ? -1 : ir_dim_add(*v[k], d);
    int below = lt_or_assume(n, *v[k], lo, false), above = below ? 0 : lt_or_assume(n, hi, *v[k], false);
    if (below < 0 || above < 0) return -1;
    *v[k] = below ? lo : above ? hi : *v[k];
  }
  int64_t diff = step > 0 ? ir_dim_sub(e, s) : ir_dim_sub(s, e);
  unsigned c = ir_dim_cmp(n->g, diff, 0);
  if (!(c & IR_CMP_GT)) diff = 0; /* empty */
  else if ((c & IR_CMP_LT) && ir_assume_nonneg(n->g, diff, NULL)) return -1;
  *len = diff;
  *start = diff ? s : 0;
  return 0;
}

static int lower_slice(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  int rt = imp_slice_runtime(n);
  if (rt) return rt < 0 ? -1 : 0;
  bool inputs = n->opset >= 10;
  ir_shape s = shape_of(n, x);
  int64_t starts[IR_MAX_RANK], ends[IR_MAX_RANK], axes[IR_MAX_RANK], steps[IR_MAX_RANK];
  int ns = ints_arg_dims(n, inputs, 1, "starts", starts, IR_MAX_RANK);
  int ne = ints_arg_dims(n, inputs, 2, "ends", ends, IR_MAX_RANK);
  if (ns == -2 || ne == -2) return -1;
  if (ns < 0 || ne < 0) return imp_fail(n, "starts and ends are required");
  if (ns != ne) return imp_fail(n, "starts and ends differ in length");
  int na = ints_arg(n, inputs, 3, "axes", axes, IR_MAX_RANK);
  int nst = inputs ? ints_arg(n, true, 4, "steps", steps, IR_MAX_RANK) : -1;
  if (na == -2 || nst == -2) return -1;
  if (na < 0)
    for (int i = 0; i < ns; i++) axes[i] = i;
  if (nst < 0)
    for (int i = 0; i < ns; i++) steps[i] = 1;
  if ((na >= 0 && na != ns) || (nst >= 0 && nst != ns))
    return imp_fail(n, "starts, ends, axes and steps differ in length");
  int64_t st[IR_MAX_RANK], sp[IR_MAX_RANK], ln[IR_MAX_RANK];
  for (int k = 0; k < s.rank; k++) st[k] = 0, sp[k] = 1, ln[k] = s.d[k];
  uint32_t seen = 0;
  for (int i = 0; i < ns; i++) {
    int a = imp_axis(n, axes[i], s.rank);
    if (a < 0) return -1;
    if (seen & (1u << a)) return imp_fail(n, "axis %d is repeated", a);
    seen |= 1u << a;
    if (steps[i] == 0) return imp_fail(n, "step 0 on axis %d", a);
    sp[a] = steps[i];
    /* (in a model without symbols every value is plain, even one in the tag range) */
    if (!imp_has_syms(n) || (!ir_dim_is_sym(s.d[a]) && !ir_dim_is_sym(starts[i]) && !ir_dim_is_sym(ends[i])))
      clamp_slice(s.d[a], starts[i], ends[i], steps[i], &st[a], &ln[a]);
    else if (clamp_slice_sym(n, s.d[a], starts[i], ends[i], steps[i], &st[a], &ln[a]))
      return -1;
  }
  return imp_set_out(n, 0, ir_view_slice(n->g, x, st, sp, ln));
}

/* Split sizes: attribute (< 13), constant input (>= 13) or equal parts
 * (num_outputs from opset 18, else the output count; the last part may be
 * smaller). */
static int split_sizes(imp_node *n, int64_t d, int64_t *sizes, int max) {
  int cnt = ints_arg(n, n->opset >= 13, 1, "split", sizes, max);
  if (cnt == -2) return -1;
  if (ir_dim_is_sym(d)) { /* equal parts that divide the axis exactly (2*H in two) */
    int64_t each;
    int parts = (int)imp_attr_i(n, "num_outputs", imp_nout(n));
    if (cnt >= 0 || parts <= 0 || parts > max || !ir_dim_div_exact(d, parts, &each))
      return imp_fail_sym(n, d, "a split of a symbolic axis other than in equal exact parts");
    for (int i = 0; i < parts; i++) sizes[i] = each;
    return parts;
  }
  if (cnt >= 0) {
    int64_t sum = 0;
    for (int i = 0; i < cnt; i++) {
      if (sizes[i] < 0) return imp_fail(n, "negative split size");
      if (ir_add_ov(sum, sizes[i], &sum)) return imp_fail(n, "split sizes overflow");
    }
    if (sum != d) return imp_fail(n, "split sizes add up to %lld, not %lld", (long long)sum, (long long)d);
    return cnt;
  }
  int parts = (int)imp_attr_i(n, "num_outputs", imp_nout(n));
  if (parts <= 0 || parts > max) return imp_fail(n, "invalid number of outputs %d", parts);
  int64_t each = (d + parts - 1) / parts, left = d;
  for (int i = 0; i < parts; i++) {
    sizes[i] = each < left ? each : left;
    left -= sizes[i];
  }
  return parts;
}

static int lower_split(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  ir_shape s = shape_of(n, x);
  int axis = imp_axis(n, imp_attr_i(n, "axis", 0), s.rank);
  if (axis < 0) return -1;
  int64_t sizes[256];
  int cnt = split_sizes(n, s.d[axis], sizes, 256);
  if (cnt < 0) return -1;
  if (cnt < imp_nout(n)) return imp_fail(n, "%d outputs for %d parts", imp_nout(n), cnt);
  int64_t at = 0;
  for (int i = 0; i < cnt; i++) {
    if (imp_has_out(n, i) && imp_set_out(n, i, slice_axis(n->g, x, axis, at, 1, sizes[i])))
      return -1;
    at = ir_dim_add(at, sizes[i]);
  }
  return 0;
}

static int lower_expand(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  int64_t sh[IR_MAX_RANK];
  int cnt = imp_const_dims(n, 1, sh, IR_MAX_RANK);
  if (cnt < 0) return -1;
  ir_shape t = ir_shape_make(cnt, sh), s = shape_of(n, x), o;
  if (!ir_shape_broadcast(&s, &t, &o)) return imp_fail(n, "shapes do not broadcast");
  return imp_set_out(n, 0, ir_view_expand(n->g, x, o));
}

/* Each repeated axis gets a new broadcast axis in front of it, and the
 * pair is then merged by a reshape (which may copy). */
static int lower_tile(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  ir_shape s = shape_of(n, x), u = {0}, e = {0}, o = s;
  int64_t rep[IR_MAX_RANK];
  int cnt = imp_const_ints(n, 1, rep, IR_MAX_RANK);
  if (cnt < 0) return -1;
  if (cnt != s.rank) return imp_fail(n, "repeats has %d entries for rank %d", cnt, s.rank);
  for (int i = 0; i < s.rank; i++) {
    if (rep[i] < 0) return imp_fail(n, "negative repeat");
    if (rep[i] && !ir_dim_is_sym(s.d[i]) && s.d[i] > INT64_MAX / 16 / rep[i])
      return imp_fail(n, "the tiled size overflows");
    if (rep[i] != 1) {
      if (u.rank >= IR_MAX_RANK) return imp_fail(n, "too many repeated axes");
      u.d[u.rank] = 1;
      e.d[u.rank++] = rep[i];
    }
    if (u.rank >= IR_MAX_RANK) return imp_fail(n, "too many repeated axes");
    u.d[u.rank] = s.d[i];
    e.d[u.rank++] = s.d[i];
    o.d[i] = ir_dim_mul(s.d[i], rep[i]); /* symbolic: IR_DIM_INVALID on overflow, refused */
  }
  e.rank = u.rank;
  ir_graph *g = n->g;
  return imp_set_out(n, 0, ir_view_reshape(g, ir_view_expand(g, ir_view_reshape(g, x, u), e), o));
}

/* Edge or reflect padding of one axis: mirrored or repeated slices of the
 * border concatenated around `x`. On a symbolic axis the far border starts
 * at d - 1 or d - 2 (symbolic) and a reflection must fit: assumed, the
 * entry checks it. */
static ir_ref pad_axis(imp_node *n, ir_ref x, int axis, int64_t before, int64_t after, bool reflect) {
  ir_graph *g = n->g;
  int64_t d = shape_of(n, x).d[axis];
  if (!before && !after) return x;
  if (d == 0) return imp_fail(n, "cannot pad an empty axis in this mode"), IR_NONE;
  int64_t most = before > after ? before : after;
  if (reflect && ir_dim_is_sym(d)) {
    if (ir_assume_nonneg(g, ir_dim_sub(ir_dim_sub(d, 1), most), "reflect padding no larger than the axis minus one"))
      return IR_NONE;
  } else if (reflect && most > d - 1) {
    return imp_fail(n, "reflect padding larger than the axis minus one"), IR_NONE;
  }
  ir_ref parts[3];
  int cnt = 0;
  if (before) {
    ir_shape t = shape_of(n, x);
    t.d[axis] = before;
    parts[cnt++] = reflect ? slice_axis(g, x, axis, before, -1, before)
                           : ir_view_expand(g, slice_axis(g, x, axis, 0, 1, 1), t);
  }
  parts[cnt++] = x;
  if (after) {
    ir_shape t = shape_of(n, x);
    t.d[axis] = after;
    parts[cnt++] = reflect ? slice_axis(g, x, axis, ir_dim_sub(d, 2), -1, after)
                           : ir_view_expand(g, slice_axis(g, x, axis, ir_dim_sub(d, 1), 1, 1), t);
  }
  if (ir_failed(g)) return IR_NONE;
  return imp_concat(n, parts, cnt, axis);
}

/* The pads (before..., after...) of a Pad node, expanded to every axis. */
static bool pad_amounts(imp_node *n, int rank, int64_t *before, int64_t *after) {
  int64_t pads[2 * IR_MAX_RANK], axes[IR_MAX_RANK];
  int cnt;
  if (n->opset >= 11) cnt = ints_arg_any(n, true, 1, "pads", pads, 2 * IR_MAX_RANK, imp_has_syms(n));
  else cnt = ints_arg(n, false, 0, n->opset >= 2 ? "pads" : "paddings", pads, 2 * IR_MAX_RANK);
  if (cnt == -2) return false;
  if (cnt == -1) return imp_fail(n, "pads are missing"), false;
  int na = n->opset >= 18 ? ints_arg(n, true, 3, "axes", axes, IR_MAX_RANK) : -1;
  if (na == -2) return false;
  if (na < 0) {
    na = rank;
    for (int i = 0; i < rank; i++) axes[i] = i;
  }
  if (cnt != 2 * na) return imp_fail(n, "%d pads for %d axes", cnt, na), false;
  for (int i = 0; i < rank; i++) before[i] = after[i] = 0;
  for (int i = 0; i < na; i++) {
    int a = imp_axis(n, axes[i], rank);
    if (a < 0) return false;
    before[a] = pads[i];
    after[a] = pads[i + na];
    /* a crop is -pad: INT64_MIN has no negation */
    if (pads[i] == INT64_MIN || pads[i + na] == INT64_MIN) return imp_fail(n, "pads out of range"), false;
  }
  return true;
}

/* The sign of a pad amount (a crop when negative): -1, 0 or 1, or 2 for a
 * symbolic one whose sign the graph does not decide. */
static int pad_sign(imp_node *n, int64_t a) {
  if (!imp_has_syms(n) || !ir_dim_is_sym(a)) return a < 0 ? -1 : a > 0;
  unsigned k = ir_dim_cmp(n->g, a, 0);
  return !(k & IR_CMP_LT) ? 1 : !(k & IR_CMP_GT) ? -1 : 2;
}

/* Constant padding with a value known only at run time: pad with zeros and
 * select the value where a padded all-true mask reads false. */
static ir_ref pad_runtime_value(imp_node *n, ir_ref x, const int64_t *before, const int64_t *after,
                                ir_ref value) {
  ir_graph *g = n->g;
  if (ir_shape_numel(imp_shape(n, value)) != 1)
    return imp_fail(n, "the pad value must be a single value"), IR_NONE;
  if (imp_dtype(n, value) != imp_dtype(n, x)) return imp_fail(n, "the pad value has another dtype"), IR_NONE;
  ir_ref inside = ir_view_pad(g, ir_load(g, IR_BOOL, shape_of(n, x), 1), before, after, 0);
  ir_ref v = ir_view_reshape(g, value, (ir_shape){0});
  return ir_where(g, inside, ir_view_pad(g, x, before, after, 0), v);
}

static int lower_pad(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  ir_shape s = shape_of(n, x);
  int64_t before[IR_MAX_RANK], after[IR_MAX_RANK];
  if (!pad_amounts(n, s.rank, before, after)) return -1;
  const char *mode = imp_attr_s(n, "mode", "constant");
  double value = 0;
  ir_ref runtime_value = IR_NONE;
  if (n->opset >= 11) {
    if (imp_has_in(n, 2) && !ir_is_const(g, imp_req(n, 2))) {
      runtime_value = imp_req(n, 2);
    } else if (imp_has_in(n, 2)) {
      double v[1];
      int c = imp_const_floats(n, 2, v, 1);
      if (c < 0) return -1;
      if (c == 1) value = v[0];
    }
  } else {
    value = imp_attr_f(n, "value", 0);
  }
  /* negative pads crop first; a symbolic amount (read from a shape: a
   * U-Net's padding of the upsampled map to its skip's size) must have a
   * sign the graph decides */
  int64_t st[IR_MAX_RANK], sp[IR_MAX_RANK], ln[IR_MAX_RANK];
  bool crop = false;
  for (int i = 0; i < s.rank; i++) {
    int sb = pad_sign(n, before[i]), se = pad_sign(n, after[i]);
    int64_t sym = ir_dim_is_sym(before[i]) ? before[i] : after[i];
    if (sb == 2 || se == 2) return imp_fail_sym(n, sym, "a Pad whose amount may be negative or positive");
    if (imp_has_syms(n) && ir_dim_is_sym(sym) && strcmp(mode, "constant"))
      return imp_fail_sym(n, sym, "reflect or edge padding by a symbolic amount");
    st[i] = sb < 0 ? ir_dim_neg(before[i]) : 0;
    sp[i] = 1;
    ln[i] = ir_dim_sub(ir_dim_sub(s.d[i], st[i]), se < 0 ? ir_dim_neg(after[i]) : 0);
    if (ln[i] == IR_DIM_INVALID) return imp_fail(n, "padding overflows on axis %d", i);
    if (!ir_dim_is_sym(ln[i]) && ln[i] < 0) return imp_fail(n, "padding crops more than axis %d", i);
    if (ir_dim_is_sym(ln[i]) && (sb < 0 || se < 0) && ir_assume_nonneg(g, ln[i], "the axis is longer than its crop"))
      return -1;
    crop |= sb < 0 || se < 0;
    if (sb < 0) before[i] = 0;
    if (se < 0) after[i] = 0;
  }
  if (crop) x = ir_view_slice(g, x, st, sp, ln);
  if (!strcmp(mode, "constant") && runtime_value != IR_NONE)
    return imp_set_out(n, 0, pad_runtime_value(n, x, before, after, runtime_value));
  if (!strcmp(mode, "constant")) return imp_set_out(n, 0, ir_view_pad(g, x, before, after, value));
  bool reflect = !strcmp(mode, "reflect");
  if (!reflect && strcmp(mode, "edge")) return imp_fail(n, "mode '%s' is not supported", mode);
  for (int i = 0; i < s.rank && x != IR_NONE; i++) x = pad_axis(n, x, i, before[i], after[i], reflect);
  return imp_set_out(n, 0, x);
}

/* Trilu keeps x where (col - row) >= k (upper) or <= k (lower): an index
 * with coefficients (-1, 1) over the last two axes compared with k. */
static int lower_trilu(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  ir_shape s = shape_of(n, x);
  if (s.rank < 2) return imp_fail(n, "input rank must be at least 2");
  ir_ref kk = ir_scalar(g, IR_I64, 0);
  if (imp_has_in(n, 1)) {
    /* k only selects the mask, so it may be a runtime value */
    ir_ref kin = imp_req(n, 1);
    if (kin == IR_NONE) return -1;
    if (ir_shape_numel(imp_shape(n, kin)) != 1) return imp_fail(n, "k must be a single value");
    if (!ir_dtype_is_float(imp_dtype(n, kin)) && imp_dtype(n, kin) != IR_BOOL)
      kk = ir_view_reshape(g, ir_cast(g, kin, IR_I64), (ir_shape){0});
    else return imp_fail(n, "k must be an integer");
  }
  bool upper = imp_attr_i(n, "upper", 1) != 0;
  ir_shape m = {.rank = 2, .d = {s.d[s.rank - 2], s.d[s.rank - 1]}};
  int64_t coef[2] = {-1, 1};
  ir_ref diff = ir_index(g, m, coef, 0);
  ir_ref keep = upper ? ir_ge(g, diff, kk) : ir_le(g, diff, kk);
  ir_ref zero = ir_scalar(g, imp_dtype(n, x), 0);
  return imp_set_out(n, 0, ir_where(g, keep, x, zero));
}

static int lower_flatten(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  ir_shape s = shape_of(n, x);
  int64_t axis = imp_attr_i(n, "axis", 1);
  if (axis < -s.rank || axis > s.rank) return imp_fail(n, "axis %lld out of range", (long long)axis);
  if (axis < 0) axis += s.rank;
  ir_shape o = {.rank = 2, .d = {1, 1}};
  for (int i = 0; i < s.rank; i++) o.d[i < axis ? 0 : 1] = ir_dim_mul(o.d[i < axis ? 0 : 1], s.d[i]);
  return imp_set_out(n, 0, ir_view_reshape(n->g, x, o));
}

const imp_op_entry imp_ops_shape[] = {
    {"Reshape", lower_reshape, IMP_SYM}, {"Transpose", lower_transpose, IMP_SYM}, {"Unsqueeze", lower_unsqueeze, IMP_SYM},
    {"Squeeze", lower_squeeze, IMP_SYM}, {"Concat", lower_concat, IMP_SYM},       {"Slice", lower_slice, IMP_SYM},
    {"Split", lower_split, IMP_SYM},     {"Expand", lower_expand, IMP_SYM},       {"Tile", lower_tile, IMP_SYM},
    {"Pad", lower_pad, IMP_SYM},         {"Trilu", lower_trilu, IMP_SYM},         {"Flatten", lower_flatten, IMP_SYM},
    {NULL, NULL, 0},
};
