/* gen_node_tests.c — writes the CTest registration of the ONNX backend node
 * tests: one test per directory, labelled "node" and by its op types; the
 * tests listed in unsupported.txt are registered as skipped with their
 * reason, so the count stays honest. */
#include "importer.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXT 4096

static int cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Inputs of `test` fixed with --freeze (frozen.txt), as a bit set. */
static unsigned frozen_inputs(const char *listdir, const char *test) {
  char path[2048], line[1024];
  snprintf(path, sizeof path, "%s/frozen.txt", listdir);
  FILE *f = fopen(path, "r");
  unsigned set = 0;
  while (f && fgets(line, sizeof line, f)) {
    char *tok = strtok(line, " \t\n");
    if (!tok || tok[0] == '#' || strcmp(tok, test)) continue;
    while ((tok = strtok(NULL, " \t\n"))) set |= 1u << atoi(tok);
  }
  if (f) fclose(f);
  return set;
}

static const char *skip_reason(char **names, char **reasons, int n, const char *test) {
  for (int i = 0; i < n; i++)
    if (!strcmp(names[i], test)) return reasons[i];
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 5 && argc != 6) {
    fprintf(stderr, "usage: gen_node_tests NODE_DIR LIST_DIR ONNX2C OUT.cmake [EXTRA_FLAGS]\n");
    return 1;
  }
  const char *extra = argc == 6 ? argv[5] : "";
  const char *root = argv[1], *exe = argv[3];
  char *names[MAXT], *reasons[MAXT];
  int nskip = 0;
  char upath[2048];
  snprintf(upath, sizeof upath, "%s/unsupported.txt", argv[2]);
  FILE *u = fopen(upath, "r");
  char line[1024];
  while (u && fgets(line, sizeof line, u) && nskip < MAXT) {
    if (line[0] == '#' || line[0] == '\n') continue;
    line[strcspn(line, "\n")] = 0;
    char *sp = strpbrk(line, " \t");
    if (!sp) continue;
    *sp++ = 0;
    sp += strspn(sp, " \t");
    names[nskip] = strdup(line);
    reasons[nskip++] = strdup(sp);
  }
  if (u) fclose(u);
  DIR *d = opendir(root);
  FILE *o = fopen(argv[4], "w");
  if (!o) return 1;
  if (!d) {
    fprintf(o, "message(WARNING \"%s not found: no node tests\")\n", root);
    fclose(o);
    return 0;
  }
  char *tests[MAXT];
  int nt = 0;
  struct dirent *e;
  while ((e = readdir(d)) && nt < MAXT)
    if (!strncmp(e->d_name, "test_", 5)) tests[nt++] = strdup(e->d_name);
  closedir(d);
  qsort(tests, (size_t)nt, sizeof *tests, cmp);
  for (int t = 0; t < nt; t++) {
    char dir[2048], model[2300], ops[4096], err[1024];
    snprintf(dir, sizeof dir, "%s/%s", root, tests[t]);
    snprintf(model, sizeof model, "%s/model.onnx", dir);
    if (imp_model_op_types(model, ops, sizeof ops, err, sizeof err)) snprintf(ops, sizeof ops, "unreadable");
    const char *why = skip_reason(names, reasons, nskip, tests[t]);
    if (why) {
      fprintf(o, "add_test(node_%s sh -c \"echo 'skipped: %s'; exit 77\")\n", tests[t] + 5, why);
    } else {
      fprintf(o, "add_test(node_%s %s run %s", tests[t] + 5, exe, model);
      char p[2400];
      unsigned frozen = frozen_inputs(argv[2], tests[t]);
      for (int i = 0;; i++) {
        snprintf(p, sizeof p, "%s/test_data_set_0/input_%d.pb", dir, i);
        FILE *f = fopen(p, "rb");
        if (!f) break;
        fclose(f);
        fprintf(o, " %s %s", frozen & (1u << i) ? "--freeze" : "-i", p);
      }
      for (int i = 0;; i++) {
        snprintf(p, sizeof p, "%s/test_data_set_0/output_%d.pb", dir, i);
        FILE *f = fopen(p, "rb");
        if (!f) break;
        fclose(f);
        fprintf(o, " -e %s", p);
      }
      fprintf(o, " --cflags -O0 %s)\n", extra);
    }
    for (char *s = ops; *s; s++)
      if (*s == ' ') *s = ';';
    fprintf(o, "set_tests_properties(node_%s PROPERTIES LABELS \"node;%s\" SKIP_RETURN_CODE 77 TIMEOUT 120)\n",
            tests[t] + 5, ops);
    free(tests[t]);
  }
  fclose(o);
  for (int i = 0; i < nskip; i++) free(names[i]), free(reasons[i]);
  return 0;
}
