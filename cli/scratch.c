/* scratch.c — run and verify in a scratch directory that goes away
 * whatever happens.
 *
 * run and verify write the generated C, the shared object, cc's and
 * onnxruntime's temporaries. The command runs in a child process with
 * TMPDIR set to a fresh directory; this process only waits for it, then
 * removes the directory: after a failure, a crash of the generated code, or
 * SIGINT/SIGTERM/SIGHUP (forwarded to the child's process group, so cc and
 * node stop too; then the signal is raised again here, so the caller sees
 * it). */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t caught;
static volatile pid_t worker;

static void forward(int sig) {
  caught = sig;
  if (worker > 0) kill(-worker, sig);
}

/* Removes `path` and what is under it, `depth` levels at most (the tree is
 * ours: the model's folder, verify's ort/, the tools' files). */
static void remove_tree(const char *path, int depth) {
  DIR *d = depth > 0 ? opendir(path) : NULL;
  for (struct dirent *e; d && (e = readdir(d));) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char p[4400];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", path, e->d_name);
    if (!lstat(p, &st) && S_ISDIR(st.st_mode))
      remove_tree(p, depth - 1);
    else
      unlink(p);
  }
  if (d) closedir(d);
  rmdir(path);
}

static const int signals[] = {SIGINT, SIGTERM, SIGHUP};
#define NSIGNALS (int)(sizeof signals / sizeof signals[0])

int cli_scratch_waiting;

int cli_in_scratch(int (*cmd)(void *), void *arg, char *err, size_t n) {
  const char *tmp = getenv("TMPDIR");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/onnx2c-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) return snprintf(err, n, "cannot create a temporary directory (%s)", strerror(errno)), -1;
  sigset_t block, old;
  sigemptyset(&block);
  for (int i = 0; i < NSIGNALS; i++) sigaddset(&block, signals[i]);
  struct sigaction sa, prev[NSIGNALS];
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = forward;
  sigemptyset(&sa.sa_mask);
  /* blocked until the child's pid is known, so no signal is lost */
  sigprocmask(SIG_BLOCK, &block, &old);
  for (int i = 0; i < NSIGNALS; i++) { /* an ignored signal (nohup, background &) stays ignored */
    sigaction(signals[i], NULL, &prev[i]);
    if (prev[i].sa_handler != SIG_IGN) sigaction(signals[i], &sa, NULL);
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    for (int i = 0; i < NSIGNALS; i++) sigaction(signals[i], &prev[i], NULL);
    setpgid(0, 0); /* its own group: a forwarded signal reaches cc and node too */
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (setenv("TMPDIR", dir, 1)) _exit(1);
    exit(cmd(arg));
  }
  if (pid > 0) {
    setpgid(pid, pid); /* also here: no race with the child's own call */
    cli_scratch_waiting = 1;
  }
  worker = pid;
  sigprocmask(SIG_SETMASK, &old, NULL);
  int st = 0, rc;
  if (pid < 0) {
    rc = (snprintf(err, n, "cannot start the worker process (%s)", strerror(errno)), -1);
  } else {
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    rc = WIFEXITED(st) ? WEXITSTATUS(st) : (snprintf(err, n, "stopped by signal %d", WTERMSIG(st)), -1);
  }
  worker = 0;
  remove_tree(dir, 8);
  for (int i = 0; i < NSIGNALS; i++) sigaction(signals[i], &prev[i], NULL);
  if (caught) raise(caught); /* terminated as asked, after the clean-up */
  return rc;
}
