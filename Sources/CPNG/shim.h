#ifndef PUSHSEAL_CPNG_SHIM_H
#define PUSHSEAL_CPNG_SHIM_H

// libpng (Debian's libpng-dev), through its simplified API: errors come back in
// png_image.message instead of through setjmp, which Swift cannot use.
#include <png.h>

#endif
