/* unit_tmpdir.h — a scratch directory for a cmocka test group: `tmpdir`
 * is made by tmpdir_setup (group setup) and removed by tmpdir_teardown.
 * Define TMPDIR_STEM before including it (the directory's name prefix). */
#ifndef UNIT_TMPDIR_H
#define UNIT_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

static char tmpdir[256];

static int tmpdir_setup(void **state) {
  (void)state;
  snprintf(tmpdir, sizeof tmpdir, "/tmp/%s-XXXXXX", TMPDIR_STEM);
  return mkdtemp(tmpdir) ? 0 : -1;
}

static int tmpdir_teardown(void **state) {
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  return system(cmd) == 0 ? 0 : -1;
}

#endif
