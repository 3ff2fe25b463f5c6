/* A new result document: result.h's skeleton around the facts its
 * caller gathered about the measuring process. */
#include "result.h"

#include "err.h"

#include <errno.h>

/* Sets doc[key] to v (taking the reference) or drops doc; returns doc. */
static json_t *set_or_drop(json_t *doc, const char *key, json_t *v)
{
	if (!doc) {
		json_decref(v);
		return NULL;
	}
	if (json_object_set_new(doc, key, v) < 0) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

json_t *result__make(const char *name, json_t *config,
		     const struct result_origin *origin)
{
	json_t *sys = origin->sysinfo ? origin->sysinfo : json_null();
	json_t *build = json_deep_copy(json_object_get(sys, "coldstart"));
	json_t *doc;

	doc = json_pack("{s:i, s:s, s:o, s:o, s:o, s:[], s:[], s:[]}",
			"schema", RESULT_SCHEMA, "bench", name, "coldstart",
			build ? build : json_null(), "sysinfo", sys, "config",
			config ? config : json_object(), "series", "warnings",
			"skipped");
	doc = set_or_drop(doc, "seccomp", origin->seccomp);
	doc = set_or_drop(doc, "guest", origin->guest);
	if (!doc)
		err__set(ENOMEM, "building the %s result", name);
	return doc;
}
