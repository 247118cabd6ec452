/* op_logic.c — lowering of the logic op family. */
#include "importer_impl.h"

const imp_op_entry imp_ops_logic[] = {
    {NULL, NULL},
};
