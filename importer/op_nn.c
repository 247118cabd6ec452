/* op_nn.c — lowering of the nn op family. */
#include "importer_impl.h"

const imp_op_entry imp_ops_nn[] = {
    {NULL, NULL},
};
