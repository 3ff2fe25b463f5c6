/* Unit tests for the guest init's kernel command line parsing and its
 * memory-touch workload (vmm/guest/init/cmdline.c, work.c). */
#include "guest/init/cmdline.h"
#include "guest/init/work.h"
#include "guest/probe_abi.h"
#include "err.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static struct init_config cfg;

static void defaults_without_options(void **state)
{
	(void)state;
	assert_int_equal(init_cmdline__parse("console=ttyS0 reboot=k quiet "
					     "panic=-1", &cfg), 0);
	assert_int_equal(cfg.signal, INIT_SIGNAL_PORT);
	assert_int_equal(cfg.done, INIT_SIGNAL_PORT);
	assert_false(cfg.has_run);
	assert_false(cfg.has_touch);
	assert_int_equal(init_cmdline__parse("", &cfg), 0);
	assert_int_equal(init_cmdline__parse("   \n", &cfg), 0);
}

static void boot_signal_variants(void **state)
{
	(void)state;
	assert_int_equal(init_cmdline__parse("coldstart.boot=mmio", &cfg), 0);
	assert_int_equal(cfg.signal, INIT_SIGNAL_MMIO);
	assert_int_equal(init_cmdline__parse("a coldstart.boot=both b", &cfg),
			 0);
	assert_int_equal(cfg.signal, INIT_SIGNAL_PORT | INIT_SIGNAL_MMIO);
	/* The last word wins, as for kernel parameters. */
	assert_int_equal(init_cmdline__parse("coldstart.boot=mmio "
					     "coldstart.boot=port", &cfg), 0);
	assert_int_equal(cfg.signal, INIT_SIGNAL_PORT);
}

static void done_signal_channels(void **state)
{
	(void)state;
	assert_int_equal(init_cmdline__parse("coldstart.done=none", &cfg), 0);
	assert_int_equal(cfg.done, 0);
	assert_int_equal(init_cmdline__parse("coldstart.done=mmio", &cfg), 0);
	assert_int_equal(cfg.done, INIT_SIGNAL_MMIO);
	assert_int_equal(init_cmdline__parse("coldstart.done=both", &cfg), 0);
	assert_int_equal(cfg.done, INIT_SIGNAL_PORT | INIT_SIGNAL_MMIO);
	assert_int_equal(init_cmdline__parse("coldstart.done=port", &cfg), 0);
	assert_int_equal(cfg.done, INIT_SIGNAL_PORT);
}

static void run_keeps_quoted_words(void **state)
{
	(void)state;
	assert_int_equal(init_cmdline__parse("console=ttyS0 coldstart.run=\""
					     "echo a  b; uname -r\" quiet\n",
					     &cfg), 0);
	assert_true(cfg.has_run);
	assert_string_equal(cfg.run, "echo a  b; uname -r");
	/* The kernel also accepts the quote before the key. */
	assert_int_equal(init_cmdline__parse("\"coldstart.run=ls /\"", &cfg),
			 0);
	assert_string_equal(cfg.run, "ls /");
	assert_int_equal(init_cmdline__parse("coldstart.run=true", &cfg), 0);
	assert_string_equal(cfg.run, "true");
	/* Other words' quotes do not leak into ours. */
	assert_int_equal(init_cmdline__parse("x=\"a b\" coldstart.run='c d'",
					     &cfg), 0);
	assert_string_equal(cfg.run, "'c");
}

static void touch_sizes_and_modifiers(void **state)
{
	static const struct {
		const char *word;
		uint64_t bytes;
		uint32_t pattern, op;
	} cases[] = {
		{ "coldstart.touch=64M", 64ull << 20, PROBE_PATTERN_SEQ,
		  PROBE_OP_WRITE },
		{ "coldstart.touch=1:random", 4096, PROBE_PATTERN_RANDOM,
		  PROBE_OP_WRITE },
		{ "coldstart.touch=4097:read", 8192, PROBE_PATTERN_SEQ,
		  PROBE_OP_READ },
		{ "coldstart.touch=2G:read:random", 2ull << 30,
		  PROBE_PATTERN_RANDOM, PROBE_OP_READ },
		{ "coldstart.touch=8k:write:seq", 8192, PROBE_PATTERN_SEQ,
		  PROBE_OP_WRITE },
		{ "coldstart.touch=64G", 64ull << 30, PROBE_PATTERN_SEQ,
		  PROBE_OP_WRITE },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		assert_int_equal(init_cmdline__parse(cases[i].word, &cfg), 0);
		assert_true(cfg.has_touch);
		assert_int_equal(cfg.touch.bytes, cases[i].bytes);
		assert_int_equal(cfg.touch.pattern, cases[i].pattern);
		assert_int_equal(cfg.touch.op, cases[i].op);
	}
}

/* A rootfs guest: the disk, the agent's port, a user's own init. */
static void root_agent_and_init(void **state)
{
	(void)state;
	assert_int_equal(init_cmdline__parse("quiet", &cfg), 0);
	assert_string_equal(cfg.root, "");
	assert_string_equal(cfg.init, "");
	assert_int_equal(cfg.agent_port, 1024);
	assert_int_equal(init_cmdline__parse("coldstart.root=/dev/vda "
					     "coldstart.agent=5000 "
					     "coldstart.init=/sbin/init",
					     &cfg), 0);
	assert_string_equal(cfg.root, "/dev/vda");
	assert_string_equal(cfg.init, "/sbin/init");
	assert_int_equal(cfg.agent_port, 5000);
}

static void errors_name_the_problem(void **state)
{
	static const struct {
		const char *cmdline, *message;
	} cases[] = {
		{ "coldstart.boot=pio", "coldstart.boot=pio" },
		{ "coldstart.boot=none", "expected port, mmio or both" },
		{ "coldstart.boot", "needs a value" },
		{ "coldstart.done=pio", "expected port, mmio, both or none" },
		{ "coldstart.rn=ls", "unknown option 'coldstart.rn'" },
		{ "coldstart.run=", "needs a command" },
		{ "coldstart.run=\"echo", "unbalanced double quote" },
		{ "coldstart.touch=", "not a number" },
		{ "coldstart.touch=0", "not within" },
		{ "coldstart.touch=65G", "not within" },
		{ "coldstart.touch=99999999999999999999", "expected a number" },
		{ "coldstart.touch=12X", "expected a number" },
		{ "coldstart.touch=-1", "not a number" },
		{ "coldstart.touch=4M:sideways", "unknown modifier 'sideways'" },
		{ "coldstart.touch=4M:", "unknown modifier ''" },
		{ "coldstart.root=vda", "expected an absolute path" },
		{ "coldstart.init=sbin/init", "expected an absolute path" },
		{ "coldstart.agent=0", "expected a vsock port" },
		{ "coldstart.agent=4294967296", "expected a vsock port" },
		{ "coldstart.agent=12ab", "expected a vsock port" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		assert_int_equal(init_cmdline__parse(cases[i].cmdline, &cfg),
				 -EINVAL);
		if (!strstr(err__last(), cases[i].message))
			fail_msg("'%s': message '%s' lacks '%s'",
				 cases[i].cmdline, err__last(),
				 cases[i].message);
	}
}

static void long_words_are_rejected(void **state)
{
	size_t n = 5000;
	char *line = malloc(n + 1);

	(void)state;
	assert_non_null(line);
	memset(line, 'a', n);
	line[n] = '\0';
	assert_int_equal(init_cmdline__parse(line, &cfg), -EINVAL);
	assert_non_null(strstr(err__last(), "longer than"));
	memcpy(line, "coldstart.run=", 14);
	line[14 + INIT_RUN_MAX] = '\0';
	assert_int_equal(init_cmdline__parse(line, &cfg), -EINVAL);
	assert_non_null(strstr(err__last(), "command longer than"));
	free(line);
}

/* The workload over real memory gives the predicted checksum; a changed
 * page changes it; read and write give different sums. */
static void touch_checksum_matches_prediction(void **state)
{
	struct init_touch t = { .bytes = 64 * 4096,
				.pattern = PROBE_PATTERN_RANDOM,
				.op = PROBE_OP_WRITE };
	uint8_t *mem = calloc(1, t.bytes);
	uint64_t want;

	(void)state;
	assert_non_null(mem);
	want = init_work__touch(&t, NULL);
	assert_int_equal(init_work__touch(&t, mem), want);
	t.op = PROBE_OP_READ;
	assert_int_not_equal(init_work__touch(&t, NULL), want);
	memset(mem, 0, t.bytes);
	assert_int_equal(init_work__touch(&t, mem), init_work__touch(&t, NULL));
	mem[5 * 4096 + 5 * 64] = 1; /* the word page 5 reads */
	assert_int_not_equal(init_work__touch(&t, mem),
			     init_work__touch(&t, NULL));
	free(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults_without_options),
		cmocka_unit_test(boot_signal_variants),
		cmocka_unit_test(done_signal_channels),
		cmocka_unit_test(run_keeps_quoted_words),
		cmocka_unit_test(touch_sizes_and_modifiers),
		cmocka_unit_test(root_agent_and_init),
		cmocka_unit_test(errors_name_the_problem),
		cmocka_unit_test(long_words_are_rejected),
		cmocka_unit_test(touch_checksum_matches_prediction),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
