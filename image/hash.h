/* SHA-256 (nettle) as lowercase hex: how results and image manifests name
 * the exact guest binaries they used. */
#ifndef COLDSTART_HASH_H
#define COLDSTART_HASH_H

#include <stddef.h>
#include <stdint.h>

/* 64 hex digits and a NUL. */
#define HASH_SHA256_HEX 65

void hash__sha256_mem(const void *data, size_t size,
		      char out[HASH_SHA256_HEX]);

/* Hashes the file at `path` and stores its size; 0 or -errno with a
 * message naming the file. */
int hash__sha256_file(const char *path, char out[HASH_SHA256_HEX],
		      uint64_t *size);

#endif
