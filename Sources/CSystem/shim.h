#ifndef TRIPBOARD_CSYSTEM_SHIM_H
#define TRIPBOARD_CSYSTEM_SHIM_H
/* Linux headers that Swift's Glibc module does not cover. */
#include <sys/signalfd.h>
#endif
