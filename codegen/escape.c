/* escape.c — the one way text from the model reaches the generated C.
 *
 * Names (of nodes, values, symbols), op types and the like come from the
 * model file, which is untrusted: printed raw into a comment, "*" "/" ends
 * the comment and what follows is code that runs in every program linking
 * the C; a newline starts a preprocessor line (#error, #include); a
 * backslash before the newline, or the trigraph ??/ (with -trigraphs),
 * splices lines. So such text is only ever printed through cg_text:
 * printable ASCII stays (names stay readable), everything that could end or
 * splice the comment or string becomes an escape made of harmless
 * characters. C identifiers never come from the model (symbols are
 * o2c_sym<k>, the prefix is --name, checked by the runtime). */
#include "codegen_impl.h"

#include <stdio.h>
#include <stdlib.h>

/* Inside a comment: '*' (so no comment can end or open), '\\' and '?' (no
 * splice, no trigraph), a final '/' (it would open a comment with a
 * following "*"), and bytes outside printable ASCII become \xNN: a
 * backslash followed by 'x' neither splices nor ends anything.
 * Inside a string literal: '"', '\\', '?' and bytes outside printable
 * ASCII become three-digit octal escapes (a following digit cannot extend
 * them), so the literal's bytes are exactly the name's. */
static bool plain(unsigned char ch, bool literal, bool last) {
  if (ch < 0x20 || ch > 0x7e || ch == '\\' || ch == '?') return false;
  if (literal) return ch != '"';
  return ch != '*' && !(ch == '/' && last);
}

void cg_text(cg_buf *b, const char *s, bool literal) {
  if (literal) cg_printf(b, "\"");
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    if (plain(*p, literal, !p[1]))
      cg_printf(b, "%c", *p);
    else if (literal)
      cg_printf(b, "\\%03o", *p);
    else
      cg_printf(b, "\\x%02x", *p);
  }
  if (literal) cg_printf(b, "\"");
  if (!b->s) cg_printf(b, "%s", ""); /* an empty name still gives a string */
}

void cg_ftext(FILE *f, const char *s, bool literal) {
  cg_buf b = {0};
  cg_text(&b, s, literal);
  fputs(b.s, f);
  free(b.s);
}
