/* outset.c — the files of one compile, written as a set: the complete new
 * set lands, or the old set stays.
 *
 * The output directory may be shared or prepared by someone else: a name
 * like DIR/model.c.tmp could be a planted symlink to a file of the user's,
 * which fopen("w") would follow and overwrite. So temporaries are made by
 * mkstemp beside their targets (O_CREAT|O_EXCL: never an existing name,
 * never through a symlink), every target is checked to be replaceable
 * before anything is renamed, and the old files are moved aside (not
 * deleted) until all new ones are in place, so a failing rename puts the
 * old set back. */
#include "runtime.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The set being written, for rt_outset_unlink_temporaries: a signal
 * handler may call it (it only reads these paths and unlinks). */
static rt_outset *volatile live;

/* Blocks the signals a user sends to stop a compile (or restores them):
 * a temporary is created and recorded, and a set is committed, with none
 * of them arriving in between. */
static void hold_signals(bool hold, sigset_t *old) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT), sigaddset(&set, SIGTERM), sigaddset(&set, SIGHUP);
  sigprocmask(hold ? SIG_BLOCK : SIG_SETMASK, hold ? &set : old, hold ? old : NULL);
}

void rt_outset_unlink_temporaries(void) {
  rt_outset *s = live;
  for (int i = 0; s && i < s->n; i++)
    if (s->tmp[i][0]) unlink(s->tmp[i]);
}

/* A new file named after `path` (PATH.XXXXXX) in `tmpl`, created
 * exclusively, with the mode a plain fopen would give it. */
static int fresh(const char *path, char *tmpl, size_t n) {
  snprintf(tmpl, n, "%s.XXXXXX", path);
  int fd = mkstemp(tmpl);
  if (fd < 0) return -1;
  mode_t mask = umask(0);
  umask(mask);
  if (fchmod(fd, 0666 & ~mask)) {
    close(fd);
    unlink(tmpl);
    return -1;
  }
  return fd;
}

int rt_outset_open(rt_outset *s, const char *dir, const char *name, const char *const *suffix, int nfiles,
                   char *err, size_t n) {
  memset(s, 0, sizeof *s);
  s->n = nfiles < RT_OUTSET_FILES ? nfiles : RT_OUTSET_FILES;
  for (int i = 0; i < s->n; i++) {
    struct stat st;
    snprintf(s->path[i], sizeof s->path[i], "%s/%s%s", dir, name, suffix[i]);
    /* a directory or a device as a target: refused before anything is written */
    if (!lstat(s->path[i], &st) && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
      return snprintf(err, n, "%s exists and is not a regular file: nothing written", s->path[i]), -1;
  }
  sigset_t old;
  hold_signals(true, &old);
  live = s;
  for (int i = 0; i < s->n; i++) {
    int fd = fresh(s->path[i], s->tmp[i], sizeof s->tmp[i]);
    if (fd >= 0 && !(s->f[i] = fdopen(fd, "wb"))) close(fd), unlink(s->tmp[i]);
    if (!s->f[i]) {
      snprintf(err, n, "%s: cannot create a file beside it (%s)", s->path[i], strerror(errno));
      s->tmp[i][0] = 0;
      hold_signals(false, &old);
      rt_outset_abort(s);
      return -1;
    }
  }
  hold_signals(false, &old);
  return 0;
}

void rt_outset_abort(rt_outset *s) {
  sigset_t old;
  hold_signals(true, &old);
  for (int i = 0; i < s->n; i++) {
    if (s->f[i]) fclose(s->f[i]);
    s->f[i] = NULL;
    if (s->tmp[i][0]) unlink(s->tmp[i]);
    s->tmp[i][0] = 0;
  }
  if (live == s) live = NULL;
  hold_signals(false, &old);
}

int rt_outset_commit(rt_outset *s, char *err, size_t n) {
  int rc = 0;
  sigset_t old;
  hold_signals(true, &old); /* a few renames: all of them or the undo, never half */
  for (int i = 0; i < s->n; i++) {
    if (fclose(s->f[i]) && !rc) rc = -1, snprintf(err, n, "%s: write error (%s)", s->tmp[i], strerror(errno));
    s->f[i] = NULL;
  }
  /* the old files aside: each renamed over a fresh empty file of its own */
  char bak[RT_OUTSET_FILES][4300] = {{0}};
  int moved = 0, placed = 0;
  for (; !rc && moved < s->n; moved++) {
    struct stat st;
    if (lstat(s->path[moved], &st)) continue; /* no old file */
    int fd = fresh(s->path[moved], bak[moved], sizeof bak[moved]);
    if (fd >= 0) close(fd);
    if (fd < 0 || rename(s->path[moved], bak[moved])) {
      rc = -1, snprintf(err, n, "%s: cannot move the old file aside (%s)", s->path[moved], strerror(errno));
      if (fd >= 0) unlink(bak[moved]);
      bak[moved][0] = 0;
      break;
    }
  }
  for (; !rc && placed < s->n; placed++)
    if (rename(s->tmp[placed], s->path[placed])) {
      rc = -1, snprintf(err, n, "%s: cannot rename into place (%s)", s->tmp[placed], strerror(errno));
      break;
    }
  if (rc) { /* undo: the new files out, the old ones back */
    for (int i = 0; i < placed; i++) unlink(s->path[i]);
    for (int i = 0; i < moved; i++)
      if (bak[i][0]) rename(bak[i], s->path[i]);
    for (int i = placed; i < s->n; i++) unlink(s->tmp[i]);
  } else {
    for (int i = 0; i < s->n; i++)
      if (bak[i][0]) unlink(bak[i]);
  }
  for (int i = 0; i < s->n; i++) s->tmp[i][0] = 0;
  if (live == s) live = NULL;
  hold_signals(false, &old);
  return rc;
}
