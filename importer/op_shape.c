/* op_shape.c — lowering of the shape op family. */
#include "importer_impl.h"

const imp_op_entry imp_ops_shape[] = {
    {NULL, NULL},
};
