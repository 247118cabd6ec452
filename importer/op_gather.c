/* op_gather.c — lowering of the gather op family. */
#include "importer_impl.h"

const imp_op_entry imp_ops_gather[] = {
    {NULL, NULL},
};
