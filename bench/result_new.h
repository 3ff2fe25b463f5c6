/* A driver's new result document (result.h's layout), filled with what
 * only the measuring process knows: its host, build, seccomp filters and
 * the guest it ran. Gathered here and handed to resultfmt's result__make,
 * which makes, writes and reads documents without the VMM. */
#ifndef COLDSTART_RESULT_NEW_H
#define COLDSTART_RESULT_NEW_H

#include <jansson.h>

/* A new document for bench `name`; takes the reference to `config` (an
 * object; NULL: empty). Collects sysinfo and names the guest (config's
 * "kernel"/"initrd" files, else the built-in probe guest) by sha256.
 * NULL with a message on ENOMEM. */
json_t *result__new(const char *name, json_t *config);

#endif
