/* cli.h — private to cli/. */
#ifndef CLI_H
#define CLI_H

#include "runtime.h"

#include <stddef.h>

#define MAX_FILES 64

/* The command line as parsed: the command, the model, and each repeatable
 * option's values in the order given. */
typedef struct {
  const char *cmd, *model, *outdir, *cflags;
  const char *inputs[MAX_FILES], *expects[MAX_FILES], *dims[MAX_FILES], *freeze[MAX_FILES];
  const char *sets[MAX_FILES], *syms[MAX_FILES], *values[MAX_FILES];
  int nin, nexp, ndims, nfreeze, nsets, nsyms, nvalues;
  unsigned seed;
  double atol, rtol;
  rt_options rt;
} cli_args;

/* Parses argv into `a` (zeroed by the caller). -h and --version print and
 * exit; an error is printed and -1 returned. */
int cli_parse(int argc, char **argv, cli_args *a);

/* Prints "onnx2c-caten: MSG" on stderr, model text made safe; returns 1. */
int cli_die(const char *msg);

/* Model text (names in messages, output names) as printed to a terminal:
 * control bytes and backslashes as \xNN, so a message stays one line and a
 * name cannot send escape sequences. Returns `buf`. */
const char *cli_shown(const char *s, char *buf, size_t n);

/* Runs cmd(arg) in a child process whose TMPDIR is a fresh directory,
 * removed once the child ends however it ends (scratch.c). Returns the
 * child's exit status, or -1 with `err` when it could not run or was
 * killed by a signal; SIGINT, SIGTERM and SIGHUP stop the child and are
 * raised again here after the clean-up. */
int cli_in_scratch(int (*cmd)(void *), void *arg, char *err, size_t errlen);
/* Set in the process that forked the worker and only waits for it: the
 * worker inherits its whole heap, and LeakSanitizer's check at its exit
 * covers both (sanitize_start.c). */
extern int cli_scratch_waiting;

#endif
