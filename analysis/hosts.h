/* The cross-host table of `coldstart compare --hosts` and of a report
 * over several results directories: it reads documents, it compares
 * none. */
#ifndef COLDSTART_HOSTS_H
#define COLDSTART_HOSTS_H

#include <stddef.h>
#include <stdio.h>

/* `compare --hosts DIR...`: one row per host, grouped by CPU model,
 * kernel and KVM flavour, with each driver's headline medians, as
 * Markdown on `out`. -errno with a message (a directory that is not
 * readable or holds something that is not a result). */
int hosts__table(char *const dirs[], size_t n, FILE *out);

#endif
