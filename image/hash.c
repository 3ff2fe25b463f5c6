/* SHA-256 of memory and files through nettle. */
#include "hash.h"

#include "err.h"
#include "regfile.h"

#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <unistd.h>

_Static_assert(HASH_SHA256_HEX == 2 * SHA256_DIGEST_SIZE + 1,
	       "hex digest size");

static void hex(const uint8_t *digest, char *out)
{
	for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
		sprintf(out + 2 * i, "%02x", digest[i]);
}

void hash__sha256_mem(const void *data, size_t size,
		      char out[HASH_SHA256_HEX])
{
	struct sha256_ctx ctx;
	uint8_t digest[SHA256_DIGEST_SIZE];

	sha256_init(&ctx);
	sha256_update(&ctx, size, data);
	sha256_digest(&ctx, sizeof(digest), digest);
	hex(digest, out);
}

int hash__sha256_file(const char *path, char out[HASH_SHA256_HEX],
		      uint64_t *size)
{
	struct sha256_ctx ctx;
	uint8_t buf[65536], digest[SHA256_DIGEST_SIZE];
	int fd = regfile__open(path, NULL); /* never blocks on a FIFO */
	ssize_t n;

	if (fd < 0)
		return fd;
	sha256_init(&ctx);
	*size = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		sha256_update(&ctx, (size_t)n, buf);
		*size += (uint64_t)n;
	}
	close(fd);
	if (n < 0)
		return err__sys(errno, "reading %s", path);
	sha256_digest(&ctx, sizeof(digest), digest);
	hex(digest, out);
	return 0;
}
