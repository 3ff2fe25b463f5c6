/* coldstart: the command table and dispatch. */
#include "commands.h"
#include "timeline.h"

#include <string.h>

static int cmd_help(int argc, char **argv);

static const struct command commands[] = {
	{ "run", "run one VM (the probe guest) and print its timeline",
	  cmd_run },
	{ "bench", NULL /* the drivers' names, from their table */,
	  cmd_bench },
	{ "snapshot", "create, restore or inspect a snapshot of the probe "
		      "guest", cmd_snapshot },
	{ "pool", "a warm pool of VMs: serve requests from it, here or over "
		  "a socket", cmd_pool },
	{ "tune", "recommendations from this host's own measurements: "
		  "restore strategy, warm pool", cmd_tune },
	{ "compare", "compare two results: regressions, like benchstat",
	  cmd_compare },
	{ "report", "Markdown, CSV and plots from stored results",
	  cmd_report },
	{ "export", "stored results as Prometheus metrics: stdout, "
		    "node_exporter textfile, Pushgateway", cmd_export },
	{ "image", "build a Linux guest image (kernel + initramfs) from "
		   "Debian's archive", cmd_image },
	{ "emulate", "run a command inside an emulated SVM host (no "
		     "/dev/kvm needed)", cmd_emulate },
	{ "sysinfo", "print host metadata as JSON", cmd_sysinfo },
	{ "probe", "observe a VMM process with eBPF probes", cmd_probe },
	{ "help", "show help for coldstart or one command", cmd_help },
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

/* "benchmark drivers: suite, lifecycle, ...", every one of them. */
static void print_drivers(FILE *out)
{
	size_t n;
	const struct bench_driver *const *d = bench__drivers(&n);

	fputs("benchmark drivers:", out);
	for (size_t i = 0; i < n; i++)
		fprintf(out, " %s%s", d[i]->name, i + 1 < n ? "," : "\n");
}

/* The actions of the commands that dispatch on a word of their own (bench
 * and tune have tables), for `coldstart help --commands COMMAND`: the
 * bash completion and the man page are made from that list. */
static const char *const actions[][2] = {
	{ "snapshot", "create\nrestore\nmerge\ninspect\n" },
	{ "pool", "run\nserve\n" },
	{ "image", "build\n" },
	{ "export", "prometheus\n" },
};

static void usage(FILE *out)
{
	fputs("Usage: coldstart COMMAND [OPTIONS]\n"
	      "       coldstart --version | --help\n\n"
	      "Measures how fast and how densely this host starts microVMs.\n\n"
	      "Commands:\n", out);
	for (size_t i = 0; i < NR_COMMANDS; i++) {
		fprintf(out, "  %-9s ", commands[i].name);
		if (commands[i].summary)
			fprintf(out, "%s\n", commands[i].summary);
		else
			print_drivers(out);
	}
	fputs("\nExit codes: 0 ok, 1 failure, 2 usage error, 77 this host "
	      "cannot run it.\n'coldstart COMMAND --help' describes each "
	      "command.\n", out);
}

static const struct command *find(const char *name)
{
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static void list(const struct command *table, size_t n)
{
	for (size_t i = 0; i < n; i++)
		puts(table[i].name);
}

/* `coldstart help --commands [COMMAND]` (not in the help text: it is for
 * tools): the commands, or COMMAND's drivers, tuners or actions, one a
 * line; nothing for a command without any. */
static int list_commands(int argc, char **argv)
{
	size_t n = 0;

	if (argc < 3) {
		list(commands, NR_COMMANDS);
		return CLI_OK;
	}
	if (argc > 3)
		return cli__error(CLI_USAGE, "help --commands: unexpected "
				  "argument '%s'", argv[3]);
	if (!find(argv[2]))
		return cli__error(CLI_USAGE, "no command '%s'", argv[2]);
	if (!strcmp(argv[2], "bench")) {
		const struct bench_driver *const *d = bench__drivers(&n);

		for (size_t i = 0; i < n; i++)
			puts(d[i]->name);
	} else if (!strcmp(argv[2], "tune")) {
		const struct command *t = tune__tuners(&n);

		list(t, n);
	}
	for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
		if (!strcmp(actions[i][0], argv[2]))
			fputs(actions[i][1], stdout);
	return CLI_OK;
}

/* `help CMD [SUB...]` is `CMD [SUB...] --help`: `help bench restore`
 * shows the restore driver's help, `help snapshot` the snapshot one. */
static int cmd_help(int argc, char **argv)
{
	const struct command *cmd;
	char help[] = "--help";
	char *args[8];
	int n = 0;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return CLI_OK;
	}
	if (!strcmp(argv[1], "--commands"))
		return list_commands(argc, argv);
	cmd = find(argv[1]);
	if (!cmd || cmd->run == cmd_help)
		return cli__error(CLI_USAGE, "no command '%s'", argv[1]);
	for (int i = 1; i < argc && n < 6; i++)
		args[n++] = argv[i];
	args[n++] = help;
	args[n] = NULL;
	return cmd->run(n, args);
}

int main(int argc, char **argv)
{
	const struct command *cmd;

	cli_process_start = timeline__now();
	if (argc < 2) {
		usage(stderr);
		return CLI_USAGE;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("coldstart %s (%s)\n", COLDSTART_VERSION,
		       COLDSTART_GIT_COMMIT);
		return CLI_OK;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return CLI_OK;
	}
	cmd = find(argv[1]);
	if (!cmd) {
		cli__error(CLI_USAGE, "unknown command '%s'", argv[1]);
		usage(stderr);
		return CLI_USAGE;
	}
	return cmd->run(argc - 1, argv + 1);
}
