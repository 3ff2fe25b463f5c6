/* `coldstart probe`: attaches the eBPF probes to any VMM process (ours,
 * QEMU, Firecracker), by pid or by starting a command, and prints where
 * its time went when it exits, after a duration, or on Ctrl-C. */
#include "args.h"
#include "commands.h"
#include "err.h"
#include "output.h"
#include "probe_report.h"
#include "units.h"

#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct probe_cli {
	pid_t pid;
	uint64_t duration_ns; /* 0: until exit or Ctrl-C */
	bool json;
	bool help;
	const char *csv;
	unsigned int set; /* enum probes_set */
	char **command; /* after "--": started, then observed */
};

static volatile sig_atomic_t interrupted;

static void usage(FILE *out)
{
	char costly[128], all[256];

	fprintf(out, "Usage: coldstart probe --pid N [OPTIONS]\n"
	      "       coldstart probe [OPTIONS] -- COMMAND [ARGS...]\n"
	      "Attaches eBPF probes to process N (all its threads), or starts "
	      "COMMAND and\nobserves it from its first instruction, and "
	      "prints where its time went: VM\nexits, guest and host page "
	      "faults, KVM ioctl latency, scheduling delay and\nmmap_lock "
	      "contention. Stops when the process exits, after --duration, "
	      "or on\nCtrl-C. Events that never fired read \"not observed on "
	      "this host\".\n\n"
	      "  -p, --pid N         the process to observe\n"
	      "  -d, --duration DUR  stop after DUR (for example 5s, 250ms)\n"
	      "  --json              one JSON document on stdout\n"
	      "  --probes SET        default (all but %s), all, or a list\n"
	      "                      of %s\n"
	      "  --csv FILE          also write the fault timeline as CSV\n"
	      "  -h, --help          this help\n\n"
	      "Exit codes: 0 ok, 1 failure (no such process, COMMAND "
	      "failed), 2 usage error,\n77 no eBPF here (a build without "
	      "probes, no kernel BTF, not root).\n",
		probes__set_names(costly, sizeof(costly),
				  PROBES_ALL & ~PROBES_DEFAULT, ", ", " and "),
		probes__set_names(all, sizeof(all), PROBES_ALL, ",", ","));
}

static const struct option options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "duration", required_argument, NULL, 'd' },
	{ "json", no_argument, NULL, 'j' },
	{ "csv", required_argument, NULL, 'c' },
	{ "probes", required_argument, NULL, 's' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_one(int c, const char *arg, struct probe_cli *o)
{
	uint64_t v;
	int ret;

	switch (c) {
	case 'p':
		ret = args__u64("--pid", arg, 1, INT32_MAX, &v);
		o->pid = (pid_t)v;
		return ret;
	case 'd':
		return args__duration("--duration", arg, &o->duration_ns);
	case 'j':
		o->json = true;
		return 0;
	case 'c':
		o->csv = arg;
		return 0;
	case 's':
		return probes__parse_set(arg, &o->set);
	case 'h':
		o->help = true;
		return 0;
	default:
		return err__set(EINVAL, "unknown or incomplete option '%s'",
				arg ? arg : "?");
	}
}

static int parse(int argc, char **argv, struct probe_cli *o)
{
	int c, ret = 0;

	memset(o, 0, sizeof(*o));
	o->set = PROBES_DEFAULT;
	optind = 0;
	opterr = 0;
	while (ret == 0 &&
	       (c = getopt_long(argc, argv, "+p:d:h", options, NULL)) != -1)
		ret = parse_one(c, c == '?' ? argv[optind - 1] : optarg, o);
	if (ret < 0 || o->help)
		return ret;
	if (optind < argc)
		o->command = argv + optind;
	if (!o->pid == !o->command)
		return err__set(EINVAL, "give either --pid N or -- COMMAND");
	return 0;
}

/* The thread-group id of `pid`: probes follow whole processes. */
static pid_t tgid_of(pid_t pid)
{
	char path[64], line[128];
	pid_t tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (!tgid && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Tgid:", 5))
			tgid = (pid_t)atoi(line + 5);
	fclose(f);
	return tgid;
}

/* Forks COMMAND, held before exec until `go` is written to. */
static pid_t start_held(char **command, int *go)
{
	int fds[2];
	pid_t pid;
	char c;

	if (pipe2(fds, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			_exit(127); /* the parent gave up */
		execvp(command[0], command);
		fprintf(stderr, "coldstart: probe: cannot run %s: %s\n",
			command[0], strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	if (pid < 0)
		close(fds[1]);
	else
		*go = fds[1];
	return pid;
}

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* Until the process exits, the duration passes or a signal comes. */
static void wait_target(pid_t pid, uint64_t duration_ns)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	uint64_t deadline = duration_ns ? now_ns() + duration_ns : 0;

	while (!interrupted) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int timeout = 100;

		if (deadline) {
			uint64_t now = now_ns();

			if (now >= deadline)
				break;
			if ((deadline - now) / 1000000 < 100)
				timeout = (int)((deadline - now) / 1000000) + 1;
		}
		if (fd >= 0 && poll(&p, 1, timeout) > 0)
			break;
		if (fd < 0 && kill(pid, 0) && errno == ESRCH)
			break;
		if (fd < 0)
			usleep(10000);
	}
	if (fd >= 0)
		close(fd);
}

static int report(const struct probe_cli *o, const struct probes_report *r)
{
	struct probe_report_opts ro = { .origin_ns = r->start_ns };
	struct output_text csv;
	json_t *doc;
	int ret = 0;

	if (o->json) {
		doc = json_pack("{s:i, s:s, s:I, s:o}", "schema", 1, "command",
				"probe", "pid", (json_int_t)r->tgid, "probes",
				probe_report__json(r, &ro));
		json_dumpf(doc, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
		json_decref(doc);
	} else {
		probe_report__print(stdout, r, &ro);
	}
	if (!o->csv)
		return 0;
	/* built in memory, then a new file beside o->csv renamed over it:
	 * never written through a link someone left at that name */
	ret = output__text_open(&csv);
	if (ret < 0)
		return ret;
	ret = probe_report__write_csv(csv.f, r, &ro);
	if (output__text_close(&csv, o->csv) < 0)
		return -ENOMEM;
	ret = ret < 0 ? err__sys(-ret, "writing %s", o->csv)
		      : output__write_path(o->csv, csv.text, csv.len);
	free(csv.text);
	return ret;
}

/* Attaches to the target (starting COMMAND if given), waits, reports. */
static int observe(const struct probe_cli *o, pid_t tgid, int go)
{
	struct probes_report *r = NULL;
	struct probes *p;
	int ret = probes__attach(tgid, o->set, &p);

	if (go >= 0) {
		if (ret == 0 && write(go, "g", 1) != 1)
			ret = err__sys(errno, "starting %s", o->command[0]);
		close(go); /* without "g" the child exits 127 */
	}
	if (ret < 0)
		return ret;
	if (!o->json)
		fprintf(stderr, "coldstart: probing process %d; Ctrl-C "
			"stops\n", (int)tgid);
	wait_target(tgid, o->duration_ns);
	ret = probes__finish(p, &r);
	probes__destroy(p);
	if (ret == 0)
		ret = report(o, r);
	probes__report_free(r);
	return ret;
}

int cmd_probe(int argc, char **argv)
{
	struct probe_cli o;
	int go = -1, status = 0, ret;
	pid_t tgid;

	if (parse(argc, argv, &o) < 0)
		return cli__parse_error("probe", "probe");
	if (o.help) {
		usage(stdout);
		return CLI_OK;
	}
	catch_signals();
	if (o.command) {
		tgid = start_held(o.command, &go);
		if (tgid < 0)
			return cli__error(CLI_FAIL, "probe: fork: %s",
					  strerror(errno));
	} else {
		tgid = tgid_of(o.pid);
		if (!tgid)
			return cli__error(CLI_FAIL, "probe: no process %d",
					  (int)o.pid);
	}
	ret = observe(&o, tgid, go);
	/* A command runs to its end even when observing stopped earlier. */
	if (go >= 0)
		waitpid(tgid, &status, 0);
	if (ret < 0)
		return cli__error(cli__exit_for(ret), "probe: %s", err__last());
	if (go >= 0 && WIFEXITED(status) && WEXITSTATUS(status))
		return cli__error(CLI_FAIL, "probe: %s exited with %d",
				  o.command[0], WEXITSTATUS(status));
	return CLI_OK;
}
