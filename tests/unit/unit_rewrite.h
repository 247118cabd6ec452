/* unit_rewrite.h — checks an IR rewrite on a graph of constants: ir_eval of
 * every output before and after must agree exactly (test_sink_region.c,
 * test_pad_share.c). Include after cmocka.h and ir.h. */
#ifndef UNIT_REWRITE_H
#define UNIT_REWRITE_H

#include <stdlib.h>

/* Runs `rewrite` on `g` (taking it), checks that it reported `want` and
 * that every output (at most 4) keeps its values. */
static void check_rewrite(ir_graph *g, int (*rewrite)(ir_graph *), int want) {
  int n = ir_output_count(g);
  void *before[4] = {0};
  assert_true(n <= 4);
  assert_int_equal(ir_verify(g), 0);
  for (int i = 0; i < n; i++) assert_int_equal(ir_eval(g, ir_output(g, i), &before[i]), 0);
  assert_int_equal(rewrite(g), want);
  assert_false(ir_failed(g));
  assert_int_equal(ir_verify(g), 0);
  for (int i = 0; i < n; i++) {
    void *after = NULL;
    const ir_node *o = ir_node_get(g, ir_output(g, i));
    assert_int_equal(ir_eval(g, ir_output(g, i), &after), 0);
    for (int64_t e = 0; e < ir_shape_numel(&o->shape); e++)
      assert_float_equal(ir_elem_f(o->dtype, after, e), ir_elem_f(o->dtype, before[i], e), 0);
    free(after), free(before[i]);
  }
  ir_graph_free(g);
}

#endif
