/* Parses the guest init's coldstart.* options from the kernel command line. */
#include "cmdline.h"

#include "../agent_abi.h"
#include "../probe_abi.h"
#include "err.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PREFIX "coldstart."
/* x86's COMMAND_LINE_SIZE is 2048: no word of a real cmdline is longer. */
#define WORD_MAX 4096

/* Copies the next word of *p into word (quotes removed, as the kernel's
 * next_arg() does) and advances *p. Returns 1 for a word, 0 at the end. */
static int next_word(const char **p, char *word)
{
	const char *s = *p;
	bool quoted = false;
	size_t n = 0;

	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return 0;
	for (; *s && (quoted || !isspace((unsigned char)*s)); s++) {
		if (*s == '"') {
			quoted = !quoted;
			continue;
		}
		if (n + 1 >= WORD_MAX)
			return err__set(EINVAL, "kernel command line word "
					"longer than %d bytes", WORD_MAX - 1);
		word[n++] = *s;
	}
	if (quoted)
		return err__set(EINVAL, "unbalanced double quote on the "
				"kernel command line");
	word[n] = '\0';
	*p = s;
	return 1;
}

int init_cmdline__size(const char *text, uint64_t *bytes)
{
	unsigned long long n;
	uint64_t shift = 0;
	char *end;

	if (!isdigit((unsigned char)*text))
		return err__set(EINVAL, "size '%s' is not a number", text);
	errno = 0;
	n = strtoull(text, &end, 10);
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift)
		end++;
	if (errno || *end)
		return err__set(EINVAL, "size '%s': expected a number with an "
				"optional K, M or G suffix", text);
	if (n == 0 || n > (INIT_TOUCH_MAX >> shift))
		return err__set(EINVAL, "size '%s' is not within 1 byte and "
				"64G", text);
	n <<= shift;
	*bytes = (n + PROBE_PAGE_SIZE - 1) & ~(PROBE_PAGE_SIZE - 1);
	return 0;
}

/* port, mmio or both as enum init_signal bits; none only where allowed. */
static int parse_channels(const char *key, const char *value, bool none_ok,
			  unsigned *out)
{
	if (!strcmp(value, "port"))
		*out = INIT_SIGNAL_PORT;
	else if (!strcmp(value, "mmio"))
		*out = INIT_SIGNAL_MMIO;
	else if (!strcmp(value, "both"))
		*out = INIT_SIGNAL_PORT | INIT_SIGNAL_MMIO;
	else if (none_ok && !strcmp(value, "none"))
		*out = 0;
	else
		return err__set(EINVAL, "coldstart.%s=%s: expected port, mmio%s",
				key, value, none_ok ? ", both or none" : " or both");
	return 0;
}

static int parse_run(const char *value, struct init_config *cfg)
{
	size_t len = strlen(value);

	if (len == 0)
		return err__set(EINVAL, "coldstart.run= needs a command");
	if (len >= sizeof(cfg->run))
		return err__set(EINVAL, "coldstart.run: command longer than "
				"%zu bytes", sizeof(cfg->run) - 1);
	memcpy(cfg->run, value, len + 1);
	cfg->has_run = true;
	return 0;
}

/* One ":"-separated modifier of coldstart.touch. */
static int parse_touch_mod(const char *mod, struct init_touch *t)
{
	if (!strcmp(mod, "seq"))
		t->pattern = PROBE_PATTERN_SEQ;
	else if (!strcmp(mod, "random"))
		t->pattern = PROBE_PATTERN_RANDOM;
	else if (!strcmp(mod, "read"))
		t->op = PROBE_OP_READ;
	else if (!strcmp(mod, "write"))
		t->op = PROBE_OP_WRITE;
	else
		return err__set(EINVAL, "coldstart.touch: unknown modifier "
				"'%s' (seq, random, read or write)", mod);
	return 0;
}

static int parse_touch(char *value, struct init_config *cfg)
{
	struct init_touch t = { .pattern = PROBE_PATTERN_SEQ,
				.op = PROBE_OP_WRITE };
	char *mod = strchr(value, ':'), *next;
	int ret;

	if (mod)
		*mod++ = '\0';
	ret = init_cmdline__size(value, &t.bytes);
	if (ret < 0) {
		char why[256]; /* err__last() is the buffer err__set writes */

		snprintf(why, sizeof(why), "%s", err__last());
		return err__set(EINVAL, "coldstart.touch: %s", why);
	}
	for (; mod; mod = next) {
		next = strchr(mod, ':');
		if (next)
			*next++ = '\0';
		ret = parse_touch_mod(mod, &t);
		if (ret < 0)
			return ret;
	}
	cfg->touch = t;
	cfg->has_touch = true;
	return 0;
}

/* An absolute path of the guest, for coldstart.root and coldstart.init. */
static int parse_path(const char *key, const char *value, char *out)
{
	size_t len = strlen(value);

	if (value[0] != '/')
		return err__set(EINVAL, "coldstart.%s=%s: expected an absolute "
				"path", key, value);
	if (len >= INIT_PATH_MAX)
		return err__set(EINVAL, "coldstart.%s: path longer than %d "
				"bytes", key, INIT_PATH_MAX - 1);
	memcpy(out, value, len + 1);
	return 0;
}

static int parse_port(const char *value, uint32_t *port)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(value, &end, 10);
	if (!isdigit((unsigned char)*value) || *end || errno || v == 0 ||
	    v > 0xffffffffu)
		return err__set(EINVAL, "coldstart.agent=%s: expected a vsock "
				"port, 1 to 4294967295", value);
	*port = (uint32_t)v;
	return 0;
}

static int parse_word(char *word, struct init_config *cfg)
{
	char *key = word + strlen(PREFIX), *value = strchr(word, '=');

	if (strncmp(word, PREFIX, strlen(PREFIX)))
		return 0;
	if (!value)
		return err__set(EINVAL, "'%s' needs a value (%s...=VALUE)",
				word, PREFIX);
	*value++ = '\0';
	if (!strcmp(key, "boot"))
		return parse_channels(key, value, false, &cfg->signal);
	if (!strcmp(key, "done"))
		return parse_channels(key, value, true, &cfg->done);
	if (!strcmp(key, "run"))
		return parse_run(value, cfg);
	if (!strcmp(key, "touch"))
		return parse_touch(value, cfg);
	if (!strcmp(key, "root") || !strcmp(key, "init"))
		return parse_path(key, value, key[0] == 'r' ? cfg->root
							    : cfg->init);
	if (!strcmp(key, "agent"))
		return parse_port(value, &cfg->agent_port);
	return err__set(EINVAL, "unknown option '%s' (coldstart.boot, "
			"coldstart.done, coldstart.run, coldstart.touch, "
			"coldstart.root, coldstart.agent or coldstart.init)",
			word);
}

int init_cmdline__parse(const char *cmdline, struct init_config *cfg)
{
	char *word = malloc(WORD_MAX);
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	cfg->signal = INIT_SIGNAL_PORT;
	cfg->done = INIT_SIGNAL_PORT;
	cfg->agent_port = AGENT_PORT;
	if (!word)
		return err__set(ENOMEM, "out of memory");
	while ((ret = next_word(&cmdline, word)) > 0) {
		ret = parse_word(word, cfg);
		if (ret < 0)
			break;
	}
	free(word);
	return ret;
}
