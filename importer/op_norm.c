/* op_norm.c — lowering of the norm op family. */
#include "importer_impl.h"

const imp_op_entry imp_ops_norm[] = {
    {NULL, NULL},
};
