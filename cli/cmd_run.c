/* `coldstart run`: one VM with the probe guest (or a Linux guest), its
 * timeline and result. */
#include "commands.h"

#include "err.h"
#include "jail.h"
#include "kvm.h"
#include "output.h"
#include "run_linux.h"
#include "run_opts.h"
#include "run_probes.h"
#include "units.h"

#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <string.h>

static void usage(FILE *out)
{
	fputs("Usage: coldstart run [OPTIONS]\n"
	      "       coldstart run --kernel FILE [--initrd FILE] [--cmdline "
	      "TEXT] [OPTIONS]\n"
	      "Runs the built-in probe guest (or a Linux guest) in one VM and "
	      "prints its\ntimeline.\n\n", out);
	run_opts__help(out);
	fputs("\nExit codes: 0 the guest finished with the predicted checksum, "
	      "1 it did not,\n2 usage error, 77 this host cannot run VMs.\n",
	      out);
}

static void print_human(const struct run_cli *o, const struct run_result *r)
{
	const struct run_config *cfg = &o->cfg;
	const struct probe_params *p = &cfg->probe;
	printf("probe guest: %u vCPU%s, %" PRIu64 " MiB %s memory; init %" PRIu64
	       " KiB, working set %" PRIu64 " KiB (%s %s), compute %" PRIu64 "\n",
	       cfg->nr_vcpus, cfg->nr_vcpus > 1 ? "s" : "",
	       cfg->mem_size / MiB, cfg->mem_ops ? cfg->mem_ops->name : "anon",
	       p->init_bytes >> 10, p->ws_bytes >> 10, run_opts_patterns[p->pattern],
	       run_opts_ops[p->op], p->compute_iters);
	timeline__print(stdout, &r->tl);
	printf("outcome: %s%s%s\n", vm__outcome_name(r->outcome),
	       r->reason[0] ? ": " : "", r->reason);
	if (r->probe.done == cfg->nr_vcpus && cfg->verify)
		printf("checksum: 0x%016" PRIx64 " (%s 0x%016" PRIx64 ")\n",
		       r->probe.checksum,
		       r->checksum_ok ? "matches the prediction"
				      : "WRONG, the host predicted",
		       r->expected_checksum);
	printf("guest work: %" PRIu64 " pages touched after READY, %" PRIu64
	       " ucalls, %" PRIu64 " VM exits\n", r->probe.pages,
	       r->probe.ucalls, r->exits);
	if (r->have_memory)
		printf("memory before teardown: RSS %" PRIu64 " KiB, PSS %" PRIu64
		       " KiB, USS %" PRIu64 " KiB; guest resident %" PRIu64
		       " KiB; VMM overhead (USS - guest) %" PRIu64 " KiB\n",
		       r->memory.rss_kib, r->memory.pss_kib, r->memory.uss_kib,
		       r->memory.guest_rss_kib,
		       memstat__overhead_kib(&r->memory));
}

static json_t *config_json(const struct run_cli *o)
{
	const struct run_config *cfg = &o->cfg;
	const struct probe_params *p = &cfg->probe;

	return json_pack("{s:s, s:I, s:i, s:s, s:s, s:I, s:I, s:s, s:i, s:s, "
			 "s:I, s:I, s:s, s:s, s:I}",
			 "guest", "probe", "mem_bytes", (json_int_t)cfg->mem_size,
			 "vcpus", (int)cfg->nr_vcpus, "mem_backend",
			 cfg->mem_ops ? cfg->mem_ops->name : "anon", "cpuid",
			 run_opts_cpuids[cfg->cpuid],
			 "init_bytes", (json_int_t)p->init_bytes, "ws_bytes",
			 (json_int_t)p->ws_bytes, "pattern",
			 run_opts_patterns[p->pattern], "stride", (int)p->stride,
			 "op", run_opts_ops[p->op], "seed", (json_int_t)p->seed,
			 "compute_iters", (json_int_t)p->compute_iters,
			 "stop_at", p->stop_at_ready ? "ready" : "done",
			 "misbehave", run_opts_misbehaviours[p->misbehave],
			 "timeout_ns", (json_int_t)cfg->timeout_ns);
}

static json_t *memory_json(const struct run_result *r)
{
	if (!r->have_memory)
		return json_null();
	return json_pack("{s:I, s:I, s:I, s:I, s:I}",
			 "rss_kib", (json_int_t)r->memory.rss_kib,
			 "pss_kib", (json_int_t)r->memory.pss_kib,
			 "uss_kib", (json_int_t)r->memory.uss_kib,
			 "guest_rss_kib", (json_int_t)r->memory.guest_rss_kib,
			 "vmm_overhead_kib",
			 (json_int_t)memstat__overhead_kib(&r->memory));
}

static void hex(char *buf, size_t size, uint64_t v)
{
	snprintf(buf, size, "0x%016" PRIx64, v);
}

static void print_json(const struct run_cli *o, const struct run_result *r,
		       const struct run_probes *rp)
{
	char sum[24], want[24];
	json_t *doc;

	hex(sum, sizeof(sum), r->probe.checksum);
	hex(want, sizeof(want), r->expected_checksum);
	doc = json_pack("{s:i, s:s, s:o, s:s, s:s, s:o, s:s, s:s, s:b, s:I, "
			"s:I, s:I, s:o, s:b}",
			"schema", 1, "command", "run", "config", config_json(o),
			"outcome", vm__outcome_name(r->outcome), "reason",
			r->reason, "timeline_ns", output__timeline_json(&r->tl),
			"checksum", sum, "expected_checksum", want,
			"checksum_ok", r->checksum_ok, "pages_touched",
			(json_int_t)r->probe.pages, "ucalls",
			(json_int_t)r->probe.ucalls, "exits",
			(json_int_t)r->exits, "memory", memory_json(r),
			"success", runner__succeeded(&o->cfg, r));
	run_probes__add_json(rp, &r->tl, doc);
	json_dumpf(doc, stdout, JSON_INDENT(2));
	fputc('\n', stdout);
	json_decref(doc);
}

static void on_signal(int sig)
{
	(void)sig;
	runner__interrupt();
}

static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int cmd_run(int argc, char **argv)
{
	struct run_cli o;
	struct run_result res = { 0 };
	struct run_probes rp;
	struct kvm_host kvm;
	int ret, code;

	if (run_opts__parse(argc, argv, &o) < 0)
		return cli__parse_error("run", "run");
	if (o.help) {
		usage(stdout);
		return CLI_OK;
	}
	/* jailed, the VMM is a child that enters the jail once set up */
	if (o.vsock[0])
		jail__remove_after(o.vsock);
	ret = jail__start(&o.jail, &code);
	if (ret < 0)
		return cli__error(CLI_FAIL, "run: %s", err__last());
	if (ret == 1)
		return code;
	/* the control thread's filter waits for the probes' readers */
	ret = run_opts__seccomp_start("run", o.seccomp, !o.probes);
	if (ret)
		return ret;
	if (o.kernel) {
		ret = run_linux(&o);
		run_opts__seccomp_report();
		return ret;
	}
	o.cfg.measure_memory = !o.quiet;
	res.tl.t[TL_PROCESS_START] = cli_process_start;
	ret = run_probes__attach(o.probes, &rp);
	if (ret < 0)
		return cli__error(cli__exit_for(ret), "run: %s", err__last());
	ret = kvm__open(&kvm, o.kvm_path);
	if (ret < 0) {
		run_probes__free(&rp);
		return cli__error(cli__exit_for(ret), "%s", err__last());
	}
	timeline__mark(&res.tl, TL_KVM_OPENED);
	catch_signals();
	ret = runner__probe(&kvm, &o.cfg, &res);
	kvm__close(&kvm);
	run_probes__finish(&rp);
	if (ret < 0) {
		run_probes__free(&rp);
		return cli__error(cli__exit_for(ret), "%s", err__last());
	}
	if (o.json)
		print_json(&o, &res, &rp);
	else if (!o.quiet)
		print_human(&o, &res);
	if (!o.json && !o.quiet)
		run_probes__print(&rp, &res.tl);
	run_probes__free(&rp);
	run_opts__seccomp_report();
	if (runner__succeeded(&o.cfg, &res))
		return CLI_OK;
	fprintf(stderr, "coldstart: run failed: %s\n",
			res.outcome == VM_COMPLETED ? "the checksum is wrong"
						    : res.reason);
	return CLI_FAIL;
}
