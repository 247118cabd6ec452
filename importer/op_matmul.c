/* op_matmul.c — lowering of the matmul op family. */
#include "importer_impl.h"

const imp_op_entry imp_ops_matmul[] = {
    {NULL, NULL},
};
