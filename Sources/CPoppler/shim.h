#ifndef TRIPBOARD_CPOPPLER_SHIM_H
#define TRIPBOARD_CPOPPLER_SHIM_H
#include <poppler.h>
#include <cairo.h>
#include <cairo-pdf.h>
#endif
