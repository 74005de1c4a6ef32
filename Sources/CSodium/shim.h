#ifndef TRIPBOARD_CSODIUM_SHIM_H
#define TRIPBOARD_CSODIUM_SHIM_H
#include <sodium.h>
#endif
