/* gen_node_tests.c — writes the CTest registration of a suite of the ONNX
 * backend tests (libonnx-testdata: node, pytorch-converted,
 * pytorch-operator, simple): one test per directory, named PREFIX + its
 * name, labelled by the prefix (without its last '_') and by its op types;
 * the tests listed in LIST run through unsupported.sh, which reports them
 * skipped with the compiler's own reason, and fails them when that reason
 * changed or the test passes now. */
#include "importer.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXT 4096

static int cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool listed(char **names, int n, const char *test) {
  for (int i = 0; i < n; i++)
    if (!strcmp(names[i], test)) return true;
  return false;
}

/* The node test's `run` command, as a user would give it: the test's
 * inputs with -i (run specialises what must be, and says so), the expected
 * outputs, the C flags. */
static void print_run(FILE *o, const char *exe, const char *dir, const char *model, const char *cflags,
                      const char *extra) {
  char p[2400];
  fprintf(o, "%s run %s", exe, model);
  for (int i = 0;; i++) {
    snprintf(p, sizeof p, "%s/test_data_set_0/input_%d.pb", dir, i);
    FILE *f = fopen(p, "rb");
    if (!f) break;
    fclose(f);
    fprintf(o, " -i %s", p);
  }
  for (int i = 0;; i++) {
    snprintf(p, sizeof p, "%s/test_data_set_0/output_%d.pb", dir, i);
    FILE *f = fopen(p, "rb");
    if (!f) break;
    fclose(f);
    fprintf(o, " -e %s", p);
  }
  fprintf(o, " --cflags \"%s\" %s", cflags, extra);
}

int main(int argc, char **argv) {
  if (argc != 12 && argc != 13) {
    fprintf(stderr, "usage: gen_node_tests TEST_DIR SCRIPT_DIR LIST PREFIX ONNX2C OUT.cmake CFLAGS PLAIN_CFLAGS "
                    "PLAIN_EVERY CLANG LABEL [EXTRA_FLAGS]\n");
    return 1;
  }
  /* every PLAIN_EVERY-th test (0: none) builds with PLAIN_CFLAGS, the others
   * with CFLAGS; LABEL names the flags the test really gets. With CLANG 1,
   * every other one of the PLAIN_EVERY-th tests builds with clang instead
   * (with_clang.sh) and CFLAGS, labelled "clang" */
  const char *root = argv[1], *scripts = argv[2], *upath = argv[3], *prefix = argv[4], *exe = argv[5],
             *cflags = argv[7], *plain = argv[8], *label = argv[11];
  int every = atoi(argv[9]);
  bool clang = atoi(argv[10]) != 0;
  const char *extra = argc == 13 ? argv[12] : "";
  /* the suite's label: the prefix without its last '_' */
  char suite[64];
  size_t np = strlen(prefix);
  if (np && prefix[np - 1] == '_') np--;
  snprintf(suite, sizeof suite, "%.*s", (int)np, prefix);
  char *names[MAXT];
  int nskip = 0;
  FILE *u = fopen(upath, "r");
  char line[1024];
  while (u && fgets(line, sizeof line, u) && nskip < MAXT) {
    if (line[0] == '#' || line[0] == '\n') continue;
    line[strcspn(line, " \t\n")] = 0;
    names[nskip++] = strdup(line);
  }
  if (u) fclose(u);
  DIR *d = opendir(root);
  if (!d) {
    fprintf(stderr, "gen_node_tests: %s: no ONNX node tests there (install libonnx-testdata)\n", root);
    return 1;
  }
  FILE *o = fopen(argv[6], "w");
  if (!o) return closedir(d), 1;
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
    bool is_plain = every > 0 && t % every == 0, is_listed = listed(names, nskip, tests[t]);
    bool is_clang = is_plain && clang && !is_listed && (t / every) % 2 == 1;
    is_plain = is_plain && !is_clang;
    /* a listed test still runs: unsupported.sh fails it if it passes now or
     * fails for another reason than the listed one, else reports it skipped */
    fprintf(o, "add_test(%s%s ", prefix, tests[t] + 5);
    if (is_listed) fprintf(o, "sh %s/unsupported.sh check %s %s ", scripts, upath, tests[t]);
    if (is_clang) fprintf(o, "sh %s/../with_clang.sh ", scripts);
    print_run(o, exe, dir, model, is_plain ? plain : cflags, extra);
    fprintf(o, ")\n");
    for (char *s = ops; *s; s++)
      if (*s == ' ') *s = ';';
    fprintf(o, "set_tests_properties(%s%s PROPERTIES LABELS \"%s;%s;%s\" SKIP_RETURN_CODE 77 TIMEOUT 120)\n",
            prefix, tests[t] + 5, suite, ops, is_clang ? "clang" : is_plain ? "plain" : label);
    free(tests[t]);
  }
  fclose(o);
  for (int i = 0; i < nskip; i++) free(names[i]);
  return 0;
}
