#ifndef TRIPBOARD_CLIBPQ_SHIM_H
#define TRIPBOARD_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
