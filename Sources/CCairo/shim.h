#ifndef TRIPBOARD_CCAIRO_SHIM_H
#define TRIPBOARD_CCAIRO_SHIM_H
#include <cairo.h>
#include <cairo-pdf.h>
#endif
