/* cli.h — private to cli/. */
#ifndef CLI_H
#define CLI_H

#include <stddef.h>

/* Runs cmd(arg) in a child process whose TMPDIR is a fresh directory,
 * removed once the child ends however it ends (scratch.c). Returns the
 * child's exit status, or -1 with `err` when it could not run or was
 * killed by a signal; SIGINT, SIGTERM and SIGHUP stop the child and are
 * raised again here after the clean-up. */
int cli_in_scratch(int (*cmd)(void *), void *arg, char *err, size_t errlen);

#endif
