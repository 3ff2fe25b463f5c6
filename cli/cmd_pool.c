/* `coldstart pool`: a warm pool of VMs in this process. `run` serves
 * requests from here and prints what the pool delivered; `serve` serves
 * other processes over a Unix socket (pool/serve.h). */
#include "args.h"
#include "commands.h"
#include "err.h"
#include "jail.h"
#include "kvm.h"
#include "pool.h"
#include "pool_bench.h"
#include "pool_config.h"
#include "pool_load.h"
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
	OPT_IDLE_TIMEOUT, OPT_CLIENT_CONNS,
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
	      "  {\"op\": \"acquire\", \"exec\": \"CMD\"}  a guest with an "
	      "agent: CMD, not\n"
	      "                            --exec's; the reply adds status, "
	      "stdout,\n"
	      "                            stderr, truncated, "
	      "first_output_us\n"
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
	      "  --client-conns N     connections one client process may "
	      "hold open (default\n"
	      "                       64, 0: 256, the server's most); at "
	      "N, its new one takes\n"
	      "                       the place of its own idle longest, or "
	      "is refused\n"
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
	pool_config__usage(out);
	fputs("Exit: 0 served (run: every request succeeded), 1 a failure, 2 "
	      "usage, 77 no\nusable KVM (or a Linux snapshot on a PVM host).\n",
	      out);
}

/* --idle-timeout: a day at most */
#define MAX_IDLE_TIMEOUT_NS (86400 * 1000000000ull)

struct pool_cmd {
	struct pool_config pc;
	bool serve, json;
	uint64_t requests, interval_ns, fill_timeout_ns, idle_timeout_ns;
	uint64_t client_conns;
	bool idle_given, client_given;
	const char *socket;
	struct jail_opts jail; /* serve: on by default, a private DIR */
};

static int parse(int argc, char **argv, struct pool_cmd *o)
{
	static const struct option own[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "requests", required_argument, NULL, 'n' },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "fill-timeout", required_argument, NULL, OPT_FILL_TIMEOUT },
		{ "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
		{ "client-conns", required_argument, NULL, OPT_CLIENT_CONNS },
		JAIL_LONG_OPTIONS,
	};
	struct option options[sizeof(own) / sizeof(own[0]) + POOL_OPTIONS_MAX +
			      1] = { { NULL, 0, NULL, 0 } };
	int c, ret = 0;

	memcpy(options, own, sizeof(own));
	pool_config__getopt(options + sizeof(own) / sizeof(own[0]));
	pool_config__defaults(&o->pc);
	jail__init(&o->jail);
	o->requests = 100;
	o->fill_timeout_ns = 60000000000ull;
	o->idle_timeout_ns = SERVE_IDLE_TIMEOUT_S * 1000000000ull;
	o->client_conns = SERVE_CLIENT_CONNS;
	/* --config's files first: every other option overrides them */
	ret = pool_config__load_args(&o->pc, argc, argv);
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
		case OPT_CLIENT_CONNS:
			o->client_given = true;
			ret = args__u64("--client-conns", optarg, 0,
					SERVE_MAX_CONNS, &o->client_conns);
			break;
		case '?':
			return args__bad_option(argv);
		default:
			ret = jail__parse_option(&o->jail, c, optarg);
			if (ret == 1)
				ret = pool_config__option(&o->pc, c, optarg);
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
	if (ret == 0 && !o->serve && o->client_given)
		ret = err__set(EINVAL, "--client-conns is for 'pool serve'");
	if (ret == 0)
		ret = pool_config__finish(&o->pc);
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

static double median_us(double *v, size_t n)
{
	struct summary s;

	if (!n)
		return 0;
	stats__summarize(v, n, &s);
	return s.p50 / 1e3;
}

/* The medians of what the requests saw, in us; with an agent, the
 * commands' first output (all, hits) and how they ended. */
struct medians {
	double acquire, first, hit_first, done;
	double output, hit_output;
	size_t served, ran, exited_0, distinct_stdout;
	const char *stdout_first; /* the first served request's */
};

/* The commands' statuses and how many different stdouts they wrote. */
static void commands(const struct pool_load *l, struct medians *m)
{
	uint64_t seen[16];
	size_t nseen = 0;

	for (size_t i = 0; i < l->n; i++) {
		const struct pool_outcome *o = &l->out[i];
		size_t k = 0;

		if (!o->ok || !o->ran)
			continue;
		if (!m->ran++)
			m->stdout_first = o->out;
		m->exited_0 += o->status == 0;
		while (k < nseen && seen[k] != o->out_hash)
			k++;
		if (k == nseen && nseen < 16)
			seen[nseen++] = o->out_hash;
	}
	m->distinct_stdout = nseen;
}

static int medians(const struct pool_load *l, struct medians *m)
{
	double *v = calloc(6 * (l->n ? l->n : 1), sizeof(double));
	double *acq = v, *first = v + l->n, *hit = v + 2 * l->n,
	       *done = v + 3 * l->n, *out = v + 4 * l->n,
	       *hit_out = v + 5 * l->n;
	size_t n = 0, nhit = 0, nout = 0, nhit_out = 0;

	if (!v)
		return err__set(ENOMEM, "allocating samples");
	for (size_t i = 0; i < l->n; i++) {
		const struct pool_outcome *o = &l->out[i];

		if (!o->ok)
			continue;
		acq[n] = o->acquire_ns;
		first[n] = o->first_ns;
		done[n] = o->done_ns;
		if (o->hit)
			hit[nhit++] = o->first_ns;
		if (o->output_ns > 0)
			out[nout++] = o->output_ns;
		if (o->output_ns > 0 && o->hit)
			hit_out[nhit_out++] = o->output_ns;
		n++;
	}
	*m = (struct medians){
		.acquire = median_us(acq, n), .first = median_us(first, n),
		.hit_first = median_us(hit, nhit), .done = median_us(done, n),
		.output = median_us(out, nout),
		.hit_output = median_us(hit_out, nhit_out), .served = n,
	};
	commands(l, m);
	free(v);
	return 0;
}

static int print_json(const struct pool_cmd *o, const struct medians *m,
		      const struct pool_stats *st, uint64_t failed)
{
	json_t *doc = json_pack(
		"{s:o*, s:o*, s:I, s:I, s:f, s:f, s:f, s:f}", "config",
		pool_config__to_json(&o->pc), "stats",
		pool_serve__stats_json(st), "served", (json_int_t)m->served,
		"failed", (json_int_t)failed, "first_run_us_p50", m->first,
		"done_us_p50", m->done, "hit_first_run_us_p50", m->hit_first,
		"acquire_us_p50", m->acquire);
	int ret = 0;

	if (doc && o->pc.exec)
		json_object_set_new(doc, "commands", json_pack(
			"{s:s, s:I, s:I, s:I, s:s, s:f, s:f}", "exec",
			o->pc.exec, "ran", (json_int_t)m->ran, "exited_0",
			(json_int_t)m->exited_0, "distinct_stdout",
			(json_int_t)m->distinct_stdout, "stdout_first",
			m->stdout_first ? m->stdout_first : "",
			"first_output_us_p50", m->output,
			"hit_first_output_us_p50", m->hit_output));
	if (!doc || json_dumpf(doc, stdout, JSON_INDENT(2)) < 0)
		ret = err__set(ENOMEM, "writing the results");
	putchar('\n');
	json_decref(doc);
	return ret;
}

static void print_text(const struct pool_cmd *o, const struct medians *m,
		       const struct pool_stats *st, uint64_t failed)
{
	const struct pool_config *c = &o->pc;

	printf("pool: %s %s, %s policy, size %u (max %u), %u refill "
	       "thread%s\n", pool__hold_name(c->hold),
	       c->source == POOL_FROM_SNAPSHOT ? "restored snapshots"
	       : c->source == POOL_FROM_LINUX
		       ? "Linux guests booted to boot complete"
		       : "probe guests booted to READY",
	       policy__name(c->policy), c->size, c->max, c->workers,
	       c->workers == 1 ? "" : "s");
	printf("requests: %zu served, %" PRIu64 " failed; %" PRIu64 " hits, %"
	       PRIu64 " misses, %" PRIu64 " waited\n",
	       m->served, failed, st->hits, st->misses, st->waits);
	printf("arrival -> VM in hand: %.1f us median; -> first "
	       "instruction: %.1f us (hits: %.1f us); -> DONE: %.1f us\n",
	       m->acquire, m->first, m->hit_first, m->done);
	if (c->exec)
		printf("commands: %zu ran, %zu exited 0, %zu different "
		       "stdout(s); arrival -> first output: %.1f us median "
		       "(hits: %.1f us)\n", m->ran, m->exited_0,
		       m->distinct_stdout, m->output, m->hit_output);
	printf("pool: %" PRIu64 " VMs made by refills (%.3f ms each on "
	       "average), %" PRIu64 " by requests; %" PRIu64
	       " failed to make, %" PRIu64 " guests failed; %.2f idle "
	       "VM-seconds, refill CPU %.3f s\n",
	       st->made, st->make_s * 1e3, st->made_on_demand,
	       st->make_failures, st->guest_failures, st->idle_vm_s,
	       st->refill_cpu_s);
}

/* Serves o->requests one after another; prints what they saw. */
static int run_requests(struct pool *p, const struct pool_cmd *o)
{
	struct pool_load l;
	struct pool_stats st;
	struct medians m = { 0 };
	int ret = pool_load__init(&l, p, o->requests);

	if (ret < 0)
		return ret;
	pool_load__closed(&l, o->interval_ns);
	pool__stats(p, &st);
	ret = medians(&l, &m);
	if (ret == 0 && o->json)
		ret = print_json(o, &m, &st, l.failed);
	else if (ret == 0)
		print_text(o, &m, &st, l.failed);
	if (l.failed && ret == 0)
		ret = err__set(EIO, "%" PRIu64 " of %" PRIu64 " requests "
			       "failed; the first: %s", l.failed, o->requests,
			       l.first_error);
	pool_load__free(&l);
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
	pool_load__catch_signals();
	ret = run_opts__seccomp_start("pool", o->pc.seccomp, true);
	if (ret)
		return ret;
	ret = kvm__open(&kvm, o->pc.kvm_path);
	if (ret < 0)
		return cli__error(cli__exit_for(ret), "pool: %s", err__last());
	o->pc.kvm = &kvm;
	/* the socket is on the host's filesystem: bound before the jail */
	ret = o->serve ? pool_serve__listen(&l, o->socket) : 0;
	if (ret == 0)
		ret = pool__start(&o->pc, &p);
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
	jail__selftest_threads(); /* the test hook: its VMs' threads too */
	if (ret == 0 && o->serve) {
		fprintf(stderr, "coldstart pool: serving %u %s VMs on %s\n",
			o->pc.size, pool__hold_name(o->pc.hold),
			o->socket);
		l.idle_timeout_ns = o->idle_timeout_ns;
		l.client_conns = (unsigned int)o->client_conns;
		ret = pool_serve__run_on(p, &l, &pool_load__stop, stderr);
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
	return pool_load__stop && !o->serve ? 130 : CLI_OK;
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
	if (ret) {
		pool_config__release(&o.pc);
		return cli__parsed(ret, "pool", usage);
	}
	ret = pool_bench__prepare_guest(&o.pc, o.serve ? "pool serve"
						       : "pool run");
	if (ret != CLI_OK)
		return ret;
	ret = serve_pool(&o);
	pool_config__release(&o.pc);
	return ret;
}

