/* unit_model_file.h — the contents of a file a compile wrote: DIR/NAME.EXT
 * of rt_model `m` (malloc'd, NUL-terminated). */
#ifndef UNIT_MODEL_FILE_H
#define UNIT_MODEL_FILE_H

#include "runtime.h"

#include <stdio.h>
#include <stdlib.h>

static char *model_file(const rt_model *m, const char *ext) {
  char path[4300];
  snprintf(path, sizeof path, "%s/%s.%s", m->dir, m->name, ext);
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = calloc(1, (size_t)n + 1);
  assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  return s;
}

#endif
