/* op_extra.c — lowering of the extra op family. */
#include "importer_impl.h"

const imp_op_entry imp_ops_extra[] = {
    {NULL, NULL},
};
