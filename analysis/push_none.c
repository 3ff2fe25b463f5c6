/* push__put in a build without libcurl (the static build). */
#include "push.h"

#include "err.h"

int push__put(const char *url, const char *body, size_t len)
{
	(void)body;
	(void)len;
	return err__set(ENOTSUP, "cannot push to %s: this coldstart was built "
			"without libcurl (the static build); use the dynamic "
			"build or --textfile-dir", url);
}
