/* op_reduce.c — lowering of the reduce op family. */
#include "importer_impl.h"

const imp_op_entry imp_ops_reduce[] = {
    {NULL, NULL},
};
