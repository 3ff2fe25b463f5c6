/* Pushgateway group URLs: the path segments any label value fits in. */
#include "push.h"

#include <nettle/base64.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool plain(const char *v)
{
	if (!*v || !strcmp(v, ".") || !strcmp(v, ".."))
		return false;
	return strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789._-~") == strlen(v);
}

/* "name/value" or "name@base64/VALUE"; the gateway reads "=" as the
 * empty value. NULL when out of memory. */
static char *segment(const char *name, const char *v)
{
	size_t len = strlen(v), done;
	struct base64_encode_ctx ctx;
	char *enc, *seg = NULL;

	if (plain(v))
		return asprintf(&seg, "%s/%s", name, v) < 0 ? NULL : seg;
	enc = malloc(BASE64_ENCODE_LENGTH(len) + BASE64_ENCODE_FINAL_LENGTH + 2);
	if (!enc)
		return NULL;
	base64url_encode_init(&ctx);
	done = base64_encode_update(&ctx, enc, len, (const uint8_t *)v);
	done += base64_encode_final(&ctx, enc + done);
	enc[done] = '\0';
	if (asprintf(&seg, "%s@base64/%s", name, done ? enc : "=") < 0)
		seg = NULL;
	free(enc);
	return seg;
}

char *push__group_url(const char *base, const char *job,
		      const char *instance)
{
	size_t blen = strlen(base);
	char *j = segment("job", job), *i = segment("instance", instance);
	char *url = NULL;

	while (blen && base[blen - 1] == '/')
		blen--;
	if (j && i && asprintf(&url, "%.*s/metrics/%s/%s", (int)blen, base, j,
			       i) < 0)
		url = NULL;
	free(j);
	free(i);
	return url;
}
