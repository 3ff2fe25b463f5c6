/* `coldstart pool`: a warm pool of VMs in this process. `run` serves
 * requests from here and prints what the pool delivered; `serve` serves
 * other processes over a Unix socket (pool/serve.h). */
#include "args.h"
#include "commands.h"
#include "err.h"
#include "jail.h"
#include "kvm.h"
#include "pool.h"
#include "pool_cli.h"
#include "run_opts.h"
#include "serve.h"
#include "stats.h"
#include "timeline.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum {
	OPT_JSON = 0x100, OPT_INTERVAL, OPT_SOCKET, OPT_FILL_TIMEOUT,
	OPT_IDLE_TIMEOUT,
};

static void usage(FILE *out)
{
	fputs("Usage: coldstart pool run [OPTIONS]\n"
	      "       coldstart pool serve --socket PATH [OPTIONS]\n"
	      "A warm pool: VMs made ahead of demand by refill threads and "
	      "handed out\none per request (a hit), or made by the request "
	      "when none is held\n(a miss); each guest runs its request phase "
	      "to DONE (a Linux guest: to its\ndone signal) and its VM is "
	      "destroyed. A VM that fails is counted and never\nhanded out "
	      "again.\n\n"
	      "run: fills the pool, serves -n requests one after another from "
	      "this\nprocess and prints hits, latencies from arrival to the "
	      "guest's first\ninstruction and to DONE, and the pool's "
	      "counters.\n"
	      "  -n, --requests N     requests (default 100)\n"
	      "  --interval DUR       time between requests (default 0: each "
	      "right after\n"
	      "                       the last); gives the refill threads "
	      "time to catch up\n"
	      "  --json               the results as JSON on stdout\n\n"
	      "serve: serves the pool on a Unix socket (line-delimited JSON: "
	      "each\nrequest one object on a line, each reply one line) until "
	      "a drain request\nor SIGINT/SIGTERM, then drains:\n"
	      "  {\"op\": \"acquire\"}        one request, run to DONE; reply "
	      "{ok, hit,\n"
	      "                            waited, acquire_us, first_run_us, "
	      "done_us, ...}\n"
	      "  {\"op\": \"stats\"}          the pool's counters\n"
	      "  {\"op\": \"resize\", \"size\": N}  a new target\n"
	      "  {\"op\": \"drain\"}          finish and stop\n"
	      "  --socket PATH        the socket (made with mode 0600)\n"
	      "  --idle-timeout DUR   a connection that sends no whole request "
	      "line for DUR\n"
	      "                       after its opening or its last reply is "
	      "closed (default\n"
	      "                       30s, 0: never); and once 256 "
	      "connections are open, a\n"
	      "                       new one takes the place of the one "
	      "idle longest\n"
	      "  --jail DIR|off       the pool's process, once its socket is "
	      "bound and its\n"
	      "                       snapshot open, runs jailed: new "
	      "namespaces (mount,\n"
	      "                       PID, network, IPC, UTS), the empty DIR "
	      "as its root, as\n"
	      "                       --uid/--gid, no capabilities. Default "
	      "on, in a private\n"
	      "                       empty directory made and removed "
	      "(/tmp/coldstart-jail-*)\n"
	      "  --uid N, --gid N     the jailed pool's user and group "
	      "(default 65534, nobody)\n"
	      "  --cpus N, --memory SIZE\n"
	      "                       jailed: cgroup limits (CPUs, bytes "
	      "with K, M or G)\n"
	      "  (run takes --jail DIR too; without it, run is not jailed)\n\n"
	      "Both:\n"
	      "  --fill-timeout DUR   how long the pool may take to fill before "
	      "serving\n"
	      "                       (default 60s)\n",
	      out);
	pool_cli__usage(out);
	fputs("Exit: 0 served (run: every request succeeded), 1 a failure, 2 "
	      "usage, 77 no\nusable KVM (or a Linux snapshot on a PVM host).\n",
	      out);
}

/* --idle-timeout: a day at most */
#define MAX_IDLE_TIMEOUT_NS (86400 * 1000000000ull)

struct pool_cmd {
	struct pool_cli pc;
	bool serve, json;
	uint64_t requests, interval_ns, fill_timeout_ns, idle_timeout_ns;
	bool idle_given;
	const char *socket;
	struct jail_opts jail; /* serve: on by default, a private DIR */
};

static int parse(int argc, char **argv, struct pool_cmd *o)
{
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "requests", required_argument, NULL, 'n' },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "fill-timeout", required_argument, NULL, OPT_FILL_TIMEOUT },
		{ "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
		POOL_CLI_OPTIONS,
		JAIL_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	int c, ret = 0;

	pool_cli__defaults(&o->pc);
	jail__init(&o->jail);
	o->requests = 100;
	o->fill_timeout_ns = 60000000000ull;
	o->idle_timeout_ns = SERVE_IDLE_TIMEOUT_S * 1000000000ull;
	optind = 0;
	opterr = 0;
	while (ret == 0 && (c = getopt_long(argc, argv, "hn:", options,
					    NULL)) != -1) {
		switch (c) {
		case 'h':
			return 1;
		case 'n':
			ret = args__u64("--requests", optarg, 1, 100000000,
					&o->requests);
			break;
		case OPT_INTERVAL:
			ret = args__duration("--interval", optarg,
					     &o->interval_ns);
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_SOCKET:
			o->socket = optarg;
			break;
		case OPT_FILL_TIMEOUT:
			ret = args__duration("--fill-timeout", optarg,
					     &o->fill_timeout_ns);
			break;
		case OPT_IDLE_TIMEOUT:
			o->idle_given = true;
			ret = args__duration("--idle-timeout", optarg,
					     &o->idle_timeout_ns);
			if (ret == 0 && o->idle_timeout_ns > MAX_IDLE_TIMEOUT_NS)
				ret = err__set(EINVAL, "--idle-timeout %s: at "
					       "most a day", optarg);
			break;
		case '?':
			return args__bad_option(argv);
		default:
			ret = jail__parse_option(&o->jail, c, optarg);
			if (ret == 1)
				ret = pool_cli__option(&o->pc, c, optarg);
			if (ret == 1)
				return args__bad_option(argv);
		}
	}
	if (ret == 0)
		ret = args__no_operands(argc, argv);
	if (ret == 0 && o->serve && !o->socket)
		ret = err__set(EINVAL, "serve needs --socket PATH");
	if (ret == 0 && !o->serve && o->socket)
		ret = err__set(EINVAL, "--socket is for 'pool serve'");
	if (ret == 0 && !o->serve && o->idle_given)
		ret = err__set(EINVAL, "--idle-timeout is for 'pool serve'");
	if (ret == 0)
		ret = pool_cli__finish(&o->pc);
	/* a server is jailed unless told otherwise: in a private DIR */
	o->jail.private_dir = o->serve && !o->jail.off && !o->jail.dir;
	if (ret == 0)
		ret = jail__check(&o->jail);
	return ret;
}

/* A jailed server's socket, once it exited (the jail kept it from the
 * file), if nobody listens on it: a server that replaced it would. */
static void remove_socket(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct stat st;
	int fd;

	if (!path || lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode) ||
	    strlen(path) >= sizeof(a.sun_path))
		return;
	memcpy(a.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 &&
	    errno == ECONNREFUSED)
		unlink(path);
	if (fd >= 0)
		close(fd);
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull),
			       (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !pool_cli__stop)
		;
}

static double median_us(double *v, size_t n)
{
	struct summary s;

	if (!n)
		return 0;
	stats__summarize(v, n, &s);
	return s.p50 / 1e3;
}

/* Serves o->requests one after another; prints what they saw. */
static int run_requests(struct pool *p, const struct pool_cmd *o)
{
	double *first = calloc(o->requests, sizeof(double));
	double *done = calloc(o->requests, sizeof(double));
	double *hit_first = calloc(o->requests, sizeof(double));
	double *acq = calloc(o->requests, sizeof(double));
	size_t n = 0, nhit = 0, failed = 0;
	struct pool_stats st;
	char first_error[256] = "";
	int ret = 0;

	if (!first || !done || !hit_first || !acq) {
		free(acq);
		free(first);
		free(done);
		free(hit_first);
		return err__set(ENOMEM, "allocating samples");
	}
	for (uint64_t i = 0; i < o->requests && !pool_cli__stop; i++) {
		struct pool_request r = { 0 };

		if (i && o->interval_ns)
			sleep_ns(o->interval_ns);
		if (pool__serve(p, &r) < 0) {
			if (!failed++)
				snprintf(first_error, sizeof(first_error), "%s",
					 err__last());
			continue;
		}
		acq[n] = (double)(r.acquired_ns - r.arrival_ns);
		first[n] = (double)(r.first_run_ns - r.arrival_ns);
		done[n] = (double)(r.done_ns - r.arrival_ns);
		if (r.hit)
			hit_first[nhit++] = first[n];
		n++;
	}
	pool__stats(p, &st);
	if (o->json) {
		json_t *doc = json_pack(
			"{s:o*, s:o*, s:I, s:I, s:f, s:f, s:f, s:f}", "config",
			pool_cli__config_json(&o->pc), "stats",
			pool_serve__stats_json(&st), "served", (json_int_t)n,
			"failed", (json_int_t)failed, "first_run_us_p50",
			median_us(first, n), "done_us_p50", median_us(done, n),
			"hit_first_run_us_p50", median_us(hit_first, nhit),
			"acquire_us_p50", median_us(acq, n));

		if (!doc || json_dumpf(doc, stdout, JSON_INDENT(2)) < 0)
			ret = err__set(ENOMEM, "writing the results");
		putchar('\n');
		json_decref(doc);
	} else {
		printf("pool: %s %s, %s policy, size %u (max %u), %u refill "
		       "thread%s\n",
		       pool__hold_name(o->pc.cfg.hold),
		       o->pc.cfg.source == POOL_FROM_SNAPSHOT
			       ? "restored snapshots"
			       : o->pc.cfg.source == POOL_FROM_LINUX
			       ? "Linux guests booted to boot complete"
			       : "probe guests booted to READY",
		       pool__policy_name(o->pc.cfg.policy), o->pc.cfg.size,
		       o->pc.cfg.max, o->pc.cfg.workers,
		       o->pc.cfg.workers == 1 ? "" : "s");
		printf("requests: %zu served, %zu failed; %" PRIu64 " hits, %"
		       PRIu64 " misses, %" PRIu64 " waited\n",
		       n, failed, st.hits, st.misses, st.waits);
		printf("arrival -> VM in hand: %.1f us median; -> first "
		       "instruction: %.1f us (hits: %.1f us); -> DONE: %.1f us\n",
		       median_us(acq, n), median_us(first, n),
		       median_us(hit_first, nhit), median_us(done, n));
		printf("pool: %" PRIu64 " VMs made by refills (%.3f ms each on "
		       "average), %" PRIu64 " by requests; %" PRIu64
		       " failed to make, %" PRIu64 " guests failed; %.2f idle "
		       "VM-seconds, refill CPU %.3f s\n",
		       st.made, st.make_s * 1e3, st.made_on_demand,
		       st.make_failures, st.guest_failures, st.idle_vm_s,
		       st.refill_cpu_s);
	}
	if (failed && ret == 0)
		ret = err__set(EIO, "%zu of %" PRIu64 " requests failed; the "
			       "first: %s", failed, o->requests, first_error);
	free(first);
	free(done);
	free(hit_first);
	free(acq);
	return ret;
}

/* Jails, opens KVM, fills the pool and serves it (run or serve). */
static int serve_pool(struct pool_cmd *o)
{
	struct kvm_host kvm;
	struct pool *p = NULL;
	struct pool_listener l = { .fd = -1 };
	int ret, code;

	/* jailed, the pool is a child that enters the jail once set up */
	ret = jail__start(&o->jail, &code);
	if (ret < 0)
		return cli__error(CLI_FAIL, "pool: %s", err__last());
	if (ret == 1) {
		remove_socket(o->socket);
		return code;
	}
	/* before the socket appears: a SIGINT once it is there drains (the
	 * jailed child, PID 1 of its namespace, would otherwise end by it) */
	pool_cli__catch_signals();
	ret = run_opts__seccomp_start("pool", o->pc.seccomp, true);
	if (ret)
		return ret;
	ret = kvm__open(&kvm, o->pc.kvm_path);
	if (ret < 0)
		return cli__error(cli__exit_for(ret), "pool: %s", err__last());
	o->pc.cfg.kvm = &kvm;
	/* the socket is on the host's filesystem: bound before the jail */
	ret = o->serve ? pool_serve__listen(&l, o->socket) : 0;
	if (ret == 0)
		ret = pool__start(&o->pc.cfg, &p);
	if (ret < 0) {
		if (o->serve && l.fd >= 0) {
			close(l.fd);
			unlink(o->socket);
		}
		kvm__close(&kvm);
		return cli__error(ret == -EINVAL || ret == -ENOENT ? CLI_USAGE
				  : cli__exit_for(ret), "pool: %s", err__last());
	}
	ret = pool__wait_filled(p, o->fill_timeout_ns);
	if (ret == 0 && o->serve) {
		fprintf(stderr, "coldstart pool: serving %u %s VMs on %s\n",
			o->pc.cfg.size, pool__hold_name(o->pc.cfg.hold),
			o->socket);
		l.idle_timeout_ns = o->idle_timeout_ns;
		ret = pool_serve__run_on(p, &l, &pool_cli__stop, stderr);
	} else if (o->serve) { /* not filled: the socket goes unused */
		close(l.fd);
		unlink(o->socket); /* jailed, it cannot: its parent does */
	} else if (ret == 0) {
		ret = seccomp__enter_main();
		if (ret == 0)
			ret = run_requests(p, o);
	}
	if (ret < 0)
		cli__error(cli__exit_for(ret), "pool: %s", err__last());
	pool__drain(p);
	kvm__close(&kvm);
	run_opts__seccomp_report();
	if (ret < 0)
		return cli__exit_for(ret);
	return pool_cli__stop && !o->serve ? 130 : CLI_OK;
}

int cmd_pool(int argc, char **argv)
{
	struct pool_cmd o = { 0 };
	int ret;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		if (argc < 2) {
			fputs("coldstart: pool: run or serve?\n", stderr);
			return cli__usage_error("pool");
		}
		usage(stdout);
		return CLI_OK;
	}
	if (strcmp(argv[1], "run") && strcmp(argv[1], "serve")) {
		cli__error(CLI_USAGE, "pool: unknown subcommand '%s' (run or "
			   "serve)", argv[1]);
		return cli__usage_error("pool");
	}
	o.serve = !strcmp(argv[1], "serve");
	ret = parse(argc - 1, argv + 1, &o);
	if (ret)
		return cli__parsed(ret, "pool", usage);
	ret = pool_cli__prepare_guest(&o.pc, o.serve ? "pool serve"
						     : "pool run");
	if (ret != CLI_OK)
		return ret;
	ret = serve_pool(&o);
	pool_cli__release_guest(&o.pc);
	return ret;
}

