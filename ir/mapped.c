/* mapped.c — weights read in place from a file mapping (external data).
 *
 * A model's external data can be larger than half the machine's memory
 * (the 1.1B LLaMA: 4.4 GB of float32). Such a weight is not copied: the
 * importer maps its bytes read-only and the graph owns the mapping. Its
 * pages are the file's page cache; after a stage has streamed through a
 * weight (packing it, writing it), ir_const_drop_pages gives them back, so
 * they stop counting in the compiler's resident memory and are read from
 * the file again if touched later. */
#include "ir_impl.h"

#include <stdlib.h>
#include <sys/mman.h>

void ir_own_mapping(ir_graph *g, const void *data, void *base, size_t len) {
  if (g->nmaps == g->capmaps) {
    g->capmaps = g->capmaps ? 2 * g->capmaps : 64;
    g->maps = realloc(g->maps, (size_t)g->capmaps * sizeof *g->maps);
    IR_ASSERT(g->maps);
  }
  g->maps[g->nmaps++] = (ir_mapping){data, base, len};
}

static ir_mapping *find(const ir_graph *g, const void *data) {
  for (int i = 0; data && i < g->nmaps; i++)
    if (g->maps[i].data == data) return &g->maps[i];
  return NULL;
}

void ir_const_drop_pages(const ir_graph *g, const void *data) {
  const ir_mapping *m = find(g, data);
  /* read-only and private: dropped pages come back from the file */
  if (m) madvise(m->base, m->len, MADV_DONTNEED);
}

bool ir_mapping_release(ir_graph *g, const void *data) {
  ir_mapping *m = find(g, data);
  if (!m) return false;
  munmap(m->base, m->len);
  *m = g->maps[--g->nmaps];
  return true;
}

void ir_mappings_free(ir_graph *g) {
  for (int i = 0; i < g->nmaps; i++) munmap(g->maps[i].base, g->maps[i].len);
  free(g->maps);
  g->maps = NULL;
  g->nmaps = g->capmaps = 0;
}
