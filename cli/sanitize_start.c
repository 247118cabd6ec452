/* sanitize_start.c — linked into onnx2c-caten in the ONNX2C_SANITIZE build
 * only (CMakeLists.txt): the zero-filled data (.bss) of the sanitizer
 * runtimes eligible for transparent huge pages.
 *
 * At exit LeakSanitizer scans every writable segment of every loaded
 * object for pointers into the heap. libasan's and libubsan's .bss hold
 * ~6 MB each (each its own stack depot, 4.4 MB) that the process never
 * wrote: the scan reads them a 4 KiB page at a time, a page fault each
 * (the shared zero page), ~3000 a process, and `run` and `verify` are two
 * processes. With MADV_HUGEPAGE on the 2 MiB-aligned middle of those
 * segments, a read maps the huge zero page, one fault for 2 MiB. LSan reads
 * the same bytes and finds the same pointers: what it reports is unchanged.
 * Without THP (or with THP off) madvise fails and nothing changes.
 *
 * And the leak check at exit is skipped in the process of `run` and
 * `verify` that forked the worker and then only waited for it
 * (cli_scratch_waiting): the worker inherited every allocation made
 * before the fork and is checked at its own exit; after the fork the
 * waiting process only removes the scratch directory. Its scan cost ~35
 * CPU-ms a test, ~1100 tests in the ASan half (Zen 5 EPYC family 26
 * model 2: node_div_example 0.31 -> 0.24 CPU-s with no scan at all). */
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "cli.h"

static int advise_object(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size, (void)data;
  const char *name = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
  if (!name || (strncmp(name, "/libasan.so", 11) && strncmp(name, "/libubsan.so", 12))) return 0;
  const uintptr_t huge = (uintptr_t)2 << 20;
  for (int j = 0; j < info->dlpi_phnum; j++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[j];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W)) continue;
    /* the part past the file's bytes: anonymous zero pages */
    uintptr_t b = (info->dlpi_addr + ph->p_vaddr + ph->p_filesz + huge - 1) & ~(huge - 1);
    uintptr_t e = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(huge - 1);
    if (e > b) madvise((void *)b, e - b, MADV_HUGEPAGE);
  }
  return 0;
}

__attribute__((constructor)) static void sanitize_start(void) { dl_iterate_phdr(advise_object, NULL); }

/* LeakSanitizer's hook: non-zero = no leak check at exit. */
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void) { return cli_scratch_waiting; }
