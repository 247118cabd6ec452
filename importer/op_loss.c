/* op_loss.c — lowering of the loss op family. */
#include "importer_impl.h"

const imp_op_entry imp_ops_loss[] = {
    {NULL, NULL},
};
