/* paths.c — where the installed program finds its data.
 *
 * The binary looks next to itself (/proc/self/exe), never in the source
 * tree it was built from: installed, DIR/bin/onnx2c-caten reads
 * DIR/share/onnx2c-caten/; in the build tree, CMake links
 * BUILD/share/onnx2c-caten/ort to the sources, and the binary (BUILD/) or a
 * test program (BUILD/tests/) finds it the same way. */
#include "runtime.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int rt_data_path(const char *rel, char *out, size_t n) {
  char exe[4096];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) return -1;
  exe[len] = 0;
  char *slash = strrchr(exe, '/');
  if (!slash) return -1;
  *slash = 0;
  static const char *const up[] = {"/../share/onnx2c-caten/", "/share/onnx2c-caten/"};
  for (size_t i = 0; i < sizeof up / sizeof up[0]; i++) {
    int k = snprintf(out, n, "%s%s%s", exe, up[i], rel);
    if (k > 0 && (size_t)k < n && !access(out, R_OK)) return 0;
  }
  return -1;
}
