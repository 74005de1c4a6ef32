#ifndef TRIPBOARD_CPOPPLERCPP_SHIM_H
#define TRIPBOARD_CPOPPLERCPP_SHIM_H
// The libraries PopplerShim's C++ is compiled against and linked with (poppler's C++ API and
// libpng); only their compiler and linker flags come through this module, no declaration.
#endif
