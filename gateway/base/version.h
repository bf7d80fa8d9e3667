#ifndef MOAT_VERSION_H
#define MOAT_VERSION_H

/* Prints Moat's version and those of the libraries on the packet path,
 * naming libsrtp's crypto backend (Moat links an OpenSSL build). */
void moat_version_print(void);

#endif
