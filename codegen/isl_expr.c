/* isl_expr.c — isl AST expressions (loop bounds, statement arguments) as C. */
#include "codegen_impl.h"

#include <isl/ast.h>
#include <isl/id.h>
#include <isl/val.h>

static void print_op(cg_buf *o, isl_ast_expr *e) {
  int n = isl_ast_expr_op_get_n_arg(e);
  isl_ast_expr *a[3] = {0};
  for (int i = 0; i < n && i < 3; i++) a[i] = isl_ast_expr_op_get_arg(e, i);
  static const struct {
    enum isl_ast_expr_op_type t;
    const char *s;
  } bin[] = {
      {isl_ast_expr_op_and, "&&"},   {isl_ast_expr_op_or, "||"},    {isl_ast_expr_op_add, "+"},
      {isl_ast_expr_op_sub, "-"},    {isl_ast_expr_op_mul, "*"},    {isl_ast_expr_op_div, "/"},
      {isl_ast_expr_op_pdiv_q, "/"}, {isl_ast_expr_op_pdiv_r, "%"}, {isl_ast_expr_op_zdiv_r, "%"},
      {isl_ast_expr_op_eq, "=="},    {isl_ast_expr_op_le, "<="},    {isl_ast_expr_op_lt, "<"},
      {isl_ast_expr_op_ge, ">="},    {isl_ast_expr_op_gt, ">"}};
  enum isl_ast_expr_op_type t = isl_ast_expr_op_get_type(e);
  const char *sym = NULL;
  for (size_t i = 0; i < sizeof bin / sizeof bin[0]; i++)
    if (bin[i].t == t) sym = bin[i].s;
  if (sym && n == 2) {
    cg_printf(o, "(");
    cg_print_expr(o, a[0]);
    cg_printf(o, " %s ", sym);
    cg_print_expr(o, a[1]);
    cg_printf(o, ")");
  } else if (t == isl_ast_expr_op_minus) {
    cg_printf(o, "(-");
    cg_print_expr(o, a[0]);
    cg_printf(o, ")");
  } else if ((t == isl_ast_expr_op_max || t == isl_ast_expr_op_min) && n == 2) {
    cg_printf(o, "(");
    cg_print_expr(o, a[0]);
    cg_printf(o, t == isl_ast_expr_op_max ? " > " : " < ");
    cg_print_expr(o, a[1]);
    cg_printf(o, " ? ");
    cg_print_expr(o, a[0]);
    cg_printf(o, " : ");
    cg_print_expr(o, a[1]);
    cg_printf(o, ")");
  } else if (t == isl_ast_expr_op_fdiv_q) {
    cg_printf(o, "floord(");
    cg_print_expr(o, a[0]);
    cg_printf(o, ", ");
    cg_print_expr(o, a[1]);
    cg_printf(o, ")");
  } else if ((t == isl_ast_expr_op_cond || t == isl_ast_expr_op_select) && n == 3) {
    cg_printf(o, "(");
    cg_print_expr(o, a[0]);
    cg_printf(o, " ? ");
    cg_print_expr(o, a[1]);
    cg_printf(o, " : ");
    cg_print_expr(o, a[2]);
    cg_printf(o, ")");
  } else {
    char *s = isl_ast_expr_to_C_str(e);
    cg_printf(o, "%s", s);
    free(s);
  }
  for (int i = 0; i < 3; i++) isl_ast_expr_free(a[i]);
}

void cg_print_expr(cg_buf *o, isl_ast_expr *e) {
  switch (isl_ast_expr_get_type(e)) {
  case isl_ast_expr_id: {
    isl_id *id = isl_ast_expr_get_id(e);
    cg_printf(o, "%s", isl_id_get_name(id));
    isl_id_free(id);
    break;
  }
  case isl_ast_expr_int: {
    isl_val *v = isl_ast_expr_get_val(e);
    cg_printf(o, "%lld", (long long)isl_val_get_num_si(v));
    isl_val_free(v);
    break;
  }
  default: print_op(o, e);
  }
}

/* Argument `i` of the call `call` (a user statement) as C. */
void cg_expr_arg(cg_buf *o, isl_ast_expr *call, int i) {
  isl_ast_expr *a = isl_ast_expr_op_get_arg(call, i);
  cg_print_expr(o, a);
  isl_ast_expr_free(a);
}
