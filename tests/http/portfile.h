/* portfile.h - how the project's test servers tell their port (exactav-testd,
 * exactav-cdnd): with --port 0 the kernel picks one, and the tests read it
 * from --port-file. */
#ifndef PORTFILE_H
#define PORTFILE_H

/* Writes "PORT\n" to path atomically (a temporary file renamed over it), so
 * a reader never sees a half-written number.  0 on success, -1 otherwise
 * (nothing left behind). */
int portfile_write(const char *path, unsigned port);

#endif
