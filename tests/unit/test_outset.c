/* test_outset.c — a compile's output set under a stop signal: the
 * temporaries beside the targets go (rt_outset_unlink_temporaries, what
 * the CLI's SIGINT/SIGTERM/SIGHUP handler calls), the old set stays, and a
 * committed set is never touched. Each case runs in a child process that
 * dies by the signal, as `onnx2c-caten compile` does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "runtime.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define TMPDIR_STEM "unit_outset"
#include "unit_tmpdir.h"

static const char *const ext[3] = {".c", ".h", ".weights"};

static void on_stop(int sig) {
  rt_outset_unlink_temporaries();
  signal(sig, SIG_DFL);
  raise(sig);
}

/* The names in `dir`, sorted, joined by spaces. */
static void listing(const char *dir, char *out, size_t n) {
  struct dirent **e;
  int k = scandir(dir, &e, NULL, alphasort);
  assert_true(k >= 0);
  out[0] = 0;
  for (int i = 0; i < k; i++) {
    if (e[i]->d_name[0] != '.') snprintf(out + strlen(out), n - strlen(out), "%s ", e[i]->d_name);
    free(e[i]);
  }
  free(e);
}

static void make_dir(char *dir, size_t n, const char *name) {
  snprintf(dir, n, "%s/%s", tmpdir, name);
  assert_int_equal(mkdir(dir, 0700), 0);
}

/* In a child: opens a set in `dir`, writes to it, commits it when
 * `commit`, then gets `sig` with the handler installed. Returns the
 * child's wait status. */
static int child_stopped(const char *dir, bool commit, int sig) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    char err[256];
    rt_outset s;
    signal(sig, on_stop);
    if (rt_outset_open(&s, dir, "model", ext, 3, err, sizeof err)) _exit(3);
    for (int i = 0; i < 3; i++) fputs("new\n", s.f[i]);
    if (commit && rt_outset_commit(&s, err, sizeof err)) _exit(4);
    raise(sig);
    _exit(5); /* not reached: the default action ends the process */
  }
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  return st;
}

static void test_signal_while_writing(void **state) {
  (void)state;
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  for (int i = 0; i < 3; i++) {
    char dir[512], names[1024];
    snprintf(names, sizeof names, "writing%d", i);
    make_dir(dir, sizeof dir, names);
    int st = child_stopped(dir, false, sigs[i]);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), sigs[i]);
    listing(dir, names, sizeof names);
    assert_string_equal(names, ""); /* no model.c.XXXXXX left */
  }
}

static void test_signal_keeps_old_set(void **state) {
  (void)state;
  char dir[512], path[600], names[1024], buf[16] = "";
  make_dir(dir, sizeof dir, "old");
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/model%s", dir, ext[i]);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("old\n", f);
    fclose(f);
  }
  int st = child_stopped(dir, false, SIGINT);
  assert_true(WIFSIGNALED(st));
  listing(dir, names, sizeof names);
  assert_string_equal(names, "model.c model.h model.weights ");
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  assert_non_null(fgets(buf, sizeof buf, f));
  fclose(f);
  assert_string_equal(buf, "old\n");
}

static void test_signal_after_commit(void **state) {
  (void)state;
  char dir[512], names[1024];
  make_dir(dir, sizeof dir, "committed");
  int st = child_stopped(dir, true, SIGINT);
  assert_true(WIFSIGNALED(st));
  listing(dir, names, sizeof names);
  assert_string_equal(names, "model.c model.h model.weights ");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_signal_while_writing),
      cmocka_unit_test(test_signal_keeps_old_set),
      cmocka_unit_test(test_signal_after_commit),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
