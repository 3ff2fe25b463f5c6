/* The Prometheus text of result documents: escaping, names, numbers,
 * Pushgateway URLs, and what a hand-made document turns into. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "result.h"
#include "openmetrics.h"
#include "push.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What fn wrote to a FILE, as a new string. */
static char *captured(void (*fn)(FILE *, const void *), const void *arg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	fn(f, arg);
	fclose(f);
	return text;
}

static void escape_fn(FILE *f, const void *arg)
{
	openmetrics__escape(f, arg);
}

static void test_escape(void **state)
{
	char *t;

	(void)state;
	t = captured(escape_fn, "a\"b\\c\nd\te\rf}g");
	assert_string_equal(t, "a\\\"b\\\\c\\nd e f}g");
	free(t);
	t = captured(escape_fn, "h\xc3\xbcst");
	assert_string_equal(t, "h\xc3\xbcst");
	free(t);
}

static void test_name(void **state)
{
	char buf[32];

	(void)state;
	openmetrics__name(buf, sizeof(buf), "mem_bytes");
	assert_string_equal(buf, "mem_bytes");
	openmetrics__name(buf, sizeof(buf), "Kernel-Stack.x");
	assert_string_equal(buf, "kernel_stack_x");
	openmetrics__name(buf, sizeof(buf), "9lives");
	assert_string_equal(buf, "_9lives");
	openmetrics__name(buf, sizeof(buf), "");
	assert_string_equal(buf, "_");
	openmetrics__name(buf, 4, "abcdef");
	assert_string_equal(buf, "abc");
}

static void test_value(void **state)
{
	char buf[40];

	(void)state;
	openmetrics__value(buf, sizeof(buf), 1295749.5 / 1e9);
	assert_string_equal(buf, "0.0012957495");
	openmetrics__value(buf, sizeof(buf), 50);
	assert_string_equal(buf, "50");
	openmetrics__value(buf, sizeof(buf), 0.1 + 0.2);
	assert_true(strtod(buf, NULL) == 0.1 + 0.2);
	openmetrics__value(buf, sizeof(buf), 0.0 / 0.0);
	assert_string_equal(buf, "NaN");
	openmetrics__value(buf, sizeof(buf), -1.0 / 0.0);
	assert_string_equal(buf, "-Inf");
}

static void test_group_url(void **state)
{
	char *u;

	(void)state;
	u = push__group_url("http://gw:9091/", "coldstart", "host-1.lan");
	assert_string_equal(u, "http://gw:9091/metrics/job/coldstart/instance/"
			       "host-1.lan");
	free(u);
	/* base64url of "a/b c" is "YS9iIGM=" */
	u = push__group_url("http://gw", "j", "a/b c");
	assert_string_equal(u, "http://gw/metrics/job/j/instance@base64/"
			       "YS9iIGM=");
	free(u);
	u = push__group_url("http://gw", "..", "");
	assert_string_equal(u, "http://gw/metrics/job@base64/Li4=/"
			       "instance@base64/=");
	free(u);
}

/* A document with one ns series and one without samples. */
static const char doc_text[] =
	"{\"schema\": 1, \"bench\": \"pool\", \"coldstart\": {\"commit\": "
	"\"abc\"}, \"config\": {\"strategy\": \"mmap\"}, \"sysinfo\": "
	"{\"hostname\": \"h\\\"x\", \"kvm\": {\"flavour\": \"svm\"}}, "
	"\"series\": [{\"name\": \"lat\", \"unit\": \"ns\", \"params\": "
	"{\"quantile\": \"q\", \"Odd-Key\": 3}, \"samples_ns\": [1000, 3000, "
	"2000]}, {\"name\": \"miss\", \"unit\": \"ns\", \"samples_ns\": []}], "
	"\"pool\": {\"hit_ratio\": 0.75, \"stats\": {\"hits\": 3}}}";

static char *write_docs(struct result_doc *docs, size_t n, int *ret)
{
	const char *paths[] = { "a.json", "b.json" };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	*ret = openmetrics__write(f, docs, paths, n, NULL);
	fclose(f);
	return text;
}

static void parse(struct result_doc *doc)
{
	json_t *root = json_loads(doc_text, 0, NULL);

	assert_non_null(root);
	assert_int_equal(result__parse_all(root, doc), 0);
	json_decref(root);
}

static void test_document(void **state)
{
	struct result_doc doc;
	char *t;
	int ret;

	(void)state;
	parse(&doc);
	t = write_docs(&doc, 1, &ret);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(t, "# TYPE coldstart_pool_seconds summary\n"));
	/* a param named like a reserved label is renamed, keys sanitized */
	assert_non_null(strstr(t, "coldstart_pool_seconds{host=\"h\\\"x\","
			       "kvm_flavour=\"svm\",kvm_mode=\"native\","
			       "series=\"lat\",param_quantile="
			       "\"q\",odd_key=\"3\",strategy=\"mmap\","
			       "quantile=\"0.5\"} 2e-06\n"));
	assert_non_null(strstr(t, "series=\"lat\",param_quantile=\"q\","
			       "odd_key=\"3\",strategy=\"mmap\"} 3\n"));
	assert_non_null(strstr(t, "_sum{host=\"h\\\"x\""));
	/* no samples: a count of 0, no quantiles */
	assert_non_null(strstr(t, "series=\"miss\",strategy=\"mmap\"} 0\n"));
	assert_null(strstr(t, "series=\"miss\",strategy=\"mmap\",quantile"));
	assert_non_null(strstr(t, "coldstart_pool_hit_ratio{host=\"h\\\"x\","
			       "kvm_flavour=\"svm\",kvm_mode=\"native\","
			       "strategy=\"mmap\"} 0.75\n"));
	/* the build once, not on every sample */
	assert_non_null(strstr(t, "# TYPE coldstart_build_info gauge\n"
			       "coldstart_build_info{host=\"h\\\"x\","
			       "commit=\"abc\"} 1\n"));
	assert_null(strstr(t, "commit=\"abc\",s"));
	assert_non_null(strstr(t, "coldstart_pool_requests{"));
	assert_non_null(strstr(t, "outcome=\"hit\",strategy=\"mmap\"} 3\n"));
	free(t);
	result__free(&doc);
}

static void test_twice(void **state)
{
	struct result_doc docs[2];
	char *t;
	int ret;

	(void)state;
	parse(&docs[0]);
	parse(&docs[1]);
	t = write_docs(docs, 2, &ret);
	assert_int_equal(ret, -EINVAL);
	free(t);
	result__free(&docs[0]);
	result__free(&docs[1]);
}

/* Not inlined: gcc's -Wdangling-pointer takes write_docs' memstream
 * buffer for a local once both are inlined into one function. */
static __attribute__((noinline)) size_t occurrences(const char *hay,
						     const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* Two benches of one host and build: one coldstart_build_info line. */
static void test_build_info_once(void **state)
{
	struct result_doc docs[2];
	json_t *root = json_loads(doc_text, 0, NULL);
	char *t;
	int ret;

	(void)state;
	parse(&docs[0]);
	assert_non_null(root);
	json_object_set_new(root, "bench", json_string("rate"));
	assert_int_equal(result__parse_all(root, &docs[1]), 0);
	json_decref(root);
	t = write_docs(docs, 2, &ret);
	assert_int_equal(ret, 0);
	assert_int_equal(occurrences(t, "coldstart_build_info{"), 1);
	free(t);
	result__free(&docs[0]);
	result__free(&docs[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_name),
		cmocka_unit_test(test_value),
		cmocka_unit_test(test_group_url),
		cmocka_unit_test(test_document),
		cmocka_unit_test(test_twice),
		cmocka_unit_test(test_build_info_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
