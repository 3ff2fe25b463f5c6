/* Unit tests for pool/pool_config.c: the option table is the help (every
 * option the parser takes is in --help), the JSON written reads back to
 * the same configuration, a bad key is refused naming it, and --config's
 * file is under every other option. No KVM. */
#include "err.h"
#include "pool_config.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

static void help_names_every_option(void **state)
{
	struct option opts[POOL_OPTIONS_MAX];
	size_t n = pool_config__getopt(opts), len = 0;
	char *text = NULL, name[64];
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	pool_config__usage(f);
	fclose(f);
	assert_true(n >= 20);
	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "  --%s ", opts[i].name);
		if (!strstr(text, name)) {
			snprintf(name, sizeof(name), "  --%s\n", opts[i].name);
			if (!strstr(text, name))
				fail_msg("--help lacks --%s", opts[i].name);
		}
		assert_int_equal(opts[i].val, POOL_OPT_BASE + (int)i);
	}
	free(text);
}

static void json_round_trip(void **state)
{
	struct pool_config a, b;
	json_t *ja, *jb;

	(void)state;
	pool_config__defaults(&a);
	assert_int_equal(pool_config__set(&a, "policy", "marginal"), 0);
	assert_int_equal(pool_config__set(&a, "burst-halflife", "333333us"), 0);
	assert_int_equal(pool_config__set(&a, "size", "3"), 0);
	assert_int_equal(pool_config__set(&a, "on-empty", "wait"), 0);
	assert_int_equal(pool_config__set(&a, "init", "4M"), 0);
	assert_int_equal(pool_config__finish(&a), 0);
	ja = pool_config__to_json(&a);
	assert_non_null(ja);
	pool_config__defaults(&b);
	assert_int_equal(pool_config__from_json(&b, ja, "a"), 0);
	assert_int_equal(pool_config__finish(&b), 0);
	jb = pool_config__to_json(&b);
	assert_non_null(jb);
	if (!json_equal(ja, jb)) {
		char *x = json_dumps(ja, 0), *y = json_dumps(jb, 0);

		fail_msg("%s\nread back as\n%s", x, y);
	}
	assert_true(b.params.burst_halflife_s == a.params.burst_halflife_s);
	json_decref(ja);
	json_decref(jb);
}

static void json_refused(void **state)
{
	static const struct {
		const char *json, *msg;
	} bad[] = {
		{ "{\"size\": -1}", "field size" },
		{ "{\"size\": 5000}", "field size" },
		{ "{\"policy\": \"ttl\"}", "field policy" },
		{ "{\"halflife_s\": \"10s\"}", "field halflife_s" },
		{ "{\"source\": \"linux\"}", "without its field kernel" },
		{ "{\"source\": \"snapshot\"}", "without its field snapshot" },
		{ "{\"marginal\": 3}", "not an object" },
		{ "[1]", "not a JSON object" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pool_config c;
		json_t *j = json_loads(bad[i].json, 0, NULL);

		assert_non_null(j);
		pool_config__defaults(&c);
		assert_int_equal(pool_config__from_json(&c, j, "F"), -EINVAL);
		if (!strstr(err__last(), bad[i].msg) ||
		    strncmp(err__last(), "F: ", 3))
			fail_msg("%s: '%s' lacks '%s'", bad[i].json,
				 err__last(), bad[i].msg);
		json_decref(j);
	}
}

/* argv through the pool options as `pool run` parses them: --config's
 * files first, then getopt over the table, then the checks. */
static int parse(struct pool_config *c, int argc, char **argv)
{
	struct option opts[POOL_OPTIONS_MAX + 1] = { { NULL, 0, NULL, 0 } };
	int opt, ret;

	pool_config__getopt(opts);
	pool_config__defaults(c);
	ret = pool_config__load_args(c, argc, argv);
	optind = 0;
	opterr = 0;
	while (ret == 0 && (opt = getopt_long(argc, argv, "", opts, NULL)) != -1)
		ret = opt == '?' ? -EINVAL : pool_config__option(c, opt, optarg);
	if (ret == 0)
		ret = pool_config__finish(c);
	return ret;
}

/* Every other option overrides --config's file, before or after it; a
 * --config the reader did not see as one is refused, not ignored. */
static void config_under_options(void **state)
{
	char path[] = "/tmp/coldstart-test-pool-config-XXXXXX", eq[80];
	const char doc[] = "{\"size\": 3, \"policy\": \"follow\"}\n";
	int fd = mkstemp(path);
	struct pool_config c;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, doc, sizeof(doc) - 1), sizeof(doc) - 1);
	close(fd);
	snprintf(eq, sizeof(eq), "--config=%s", path);
	{
		char *argv[] = { "run", "--config", path, NULL };

		assert_int_equal(parse(&c, 3, argv), 0);
		assert_int_equal(c.size, 3);
		assert_int_equal(c.policy, POOL_FOLLOW);
		pool_config__release(&c);
	}
	{
		char *argv[] = { "run", "--size", "1", eq, "--policy", "fixed",
				 NULL };

		assert_int_equal(parse(&c, 6, argv), 0);
		assert_int_equal(c.size, 1);
		assert_int_equal(c.policy, POOL_FIXED);
		pool_config__release(&c);
	}
	{
		char *argv[] = { "run", "--conf", path, NULL };

		assert_int_equal(parse(&c, 3, argv), -EINVAL);
		assert_non_null(strstr(err__last(), "give it as --config FILE"));
		pool_config__release(&c);
	}
	{
		char *argv[] = { "run", "--cmdline", eq, NULL };

		assert_int_equal(parse(&c, 3, argv), -EINVAL);
		assert_non_null(strstr(err__last(), "read as another option's "
				       "value"));
		pool_config__release(&c);
	}
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(help_names_every_option),
		cmocka_unit_test(json_round_trip),
		cmocka_unit_test(json_refused),
		cmocka_unit_test(config_under_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
