/* op_misc.c — lowering of the misc op family. */
#include "importer_impl.h"

const imp_op_entry imp_ops_misc[] = {
    {NULL, NULL},
};
