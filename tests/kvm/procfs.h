/* What this process holds, read from /proc/self: for the tests that check
 * a VM, a pool or a shell leaves nothing behind. */
#ifndef COLDSTART_TEST_PROCFS_H
#define COLDSTART_TEST_PROCFS_H

/* Entries of a directory such as /proc/self/fd or /proc/self/task
 * (. and .. included, so compare counts). Fails the test if unreadable. */
unsigned int procfs__count_entries(const char *dir);

/* Lines of /proc/self/maps containing `needle` (NULL: all lines). */
unsigned int procfs__count_maps(const char *needle);

#endif
