/* What this process holds, read from /proc/self (procfs.h). */
#include "procfs.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

unsigned int procfs__count_entries(const char *dir)
{
	unsigned int n = 0;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

unsigned int procfs__count_maps(const char *needle)
{
	char line[512];
	unsigned int n = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		n += !needle || strstr(line, needle);
	fclose(f);
	return n;
}
