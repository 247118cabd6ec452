/* op_quant.c — lowering of the quant op family. */
#include "importer_impl.h"

const imp_op_entry imp_ops_quant[] = {
    {NULL, NULL},
};
