#ifndef PUSHSEAL_CQRENCODE_SHIM_H
#define PUSHSEAL_CQRENCODE_SHIM_H

// libqrencode (Debian's libqrencode-dev): the QR code of a share for `keys export --qr`.
#include <qrencode.h>

#endif
