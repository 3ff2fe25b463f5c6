/* `coldstart tune pool`: its help and its exit status; the tuner itself
 * is tune/tune_pool*.c. */
#include "commands.h"

#include "cli.h"
#include "err.h"
#include "poolsim.h"
#include "tune_pool.h"

#include <stdio.h>

static void usage(FILE *out)
{
	fputs("Usage: coldstart tune pool --host RESULTS_DIR --arrivals SPEC "
	      "--slo SLO [OPTIONS]\n"
	      "       coldstart tune pool --costs FILE | --cost hit=..,make=.."
	      ",mem=.. --arrivals SPEC\n"
	      "                           --slo SLO [OPTIONS]\n\n"
	      "Simulates a warm pool fed with the costs a `coldstart bench "
	      "suite` measured\n(RESULTS_DIR), sweeps every policy's "
	      "parameters, and recommends the\nconfiguration that meets the "
	      "SLO at the least idle VM-seconds. No KVM needed.\n\n"
	      "  --host DIR           results directory: pool.json (required),"
	      " restore.json,\n"
	      "                       density.json\n"
	      "  --costs FILE         given costs instead: JSON with hit_s, "
	      "make_s (seconds or\n"
	      "                       arrays of samples), vm_mib; optional "
	      "miss_s, workers,\n"
	      "                       on_empty\n"
	      "  --cost TEXT          given costs: hit=DUR,make=DUR,mem=SIZE"
	      "[,miss=DUR][,workers=K]\n"
	      "  --arrivals SPEC      poisson:RATE, mmpp:R0,R1,D0,D1, "
	      "batch:RATE,SIZE[,within=DUR]\n"
	      "                       or trace:FILE[,format=..]\n"
	      "  --duration DUR       time line of poisson/mmpp (default 1h), "
	      "window of a trace\n"
	      "                       (default: the whole trace)\n"
	      "  --time-scale F       multiplies trace time, 1e-6 to 1e6 "
	      "(default 1)\n"
	      "  --seed N             arrivals and cost resampling (default 1)"
	      "\n"
	      "  --slo SLO            pXX=TIME of arrival -> first instruction, "
	      "any percentile\n"
	      "                       (e.g. p95=20ms, p99=50ms), or hits=PCT% "
	      "(e.g. hits=99%)\n"
	      "  --policies LIST      comma-separated, of ",
	      out);
	for (int k = 0; k < POOLSIM_POLICIES; k++)
		fprintf(out, "%s%s", k ? "," : "",
			poolsim__policy_name(poolsim__policy_at(k)));
	fputs("\n"
	      "                       (default all)\n"
	      "  --memory-budget SIZE how many such pools and warm VMs fit in "
	      "SIZE; no pool\n"
	      "                       larger is swept\n"
	      "  --max-vms N          the largest pool swept (default 4096): "
	      "a policy that\n"
	      "                       meets nothing is swept on up to it\n"
	      "  --holdout F          tune on the first 1 - F of the arrivals, "
	      "recommend what\n"
	      "                       also meets the SLO on the rest "
	      "(e.g. 0.25)\n"
	      "  --workers K          refill workers (default: pool.json's, "
	      "else 1)\n"
	      "  --json               the document on stdout instead of the "
	      "report\n"
	      "  --out DIR            write tune-pool.json, tune-pool.md, "
	      "pareto.csv, pareto.png\n"
	      "  --validate           then replay the arrivals through a real "
	      "fixed pool on this\n"
	      "                       host (`coldstart bench pool`, KVM) at "
	      "three sizes, and\n"
	      "                       compare measured with simulated hit "
	      "ratio and p99\n"
	      "  --validate-sizes L   those sizes, comma-separated (default: "
	      "the recommended\n"
	      "                       fixed size, one below and one above)\n"
	      "  --kvm PATH           --validate's KVM device (default "
	      "/dev/kvm)\n\n"
	      "Exit status: 0 a recommendation, 1 no configuration meets the "
	      "SLO (the report\nsays what it would take), 2 bad\narguments or a missing or malformed input file, 77 "
	      "--validate on a host\nthat cannot run VMs. Validation results "
	      "do not change the status.\n",
	      out);
}

int cmd_tune_pool(int argc, char **argv)
{
	struct tp_opts o;
	int code, ret = tune_pool__parse(argc, argv, &o);

	if (ret != 0)
		return cli__parsed(ret, "tune pool", usage);
	ret = tune_pool__run(&o, &code);
	if (ret < 0)
		return cli__error(code, "tune pool: %s", err__last());
	if (ret == 0)
		fprintf(stderr, "coldstart: no configuration meets %s\n",
			o.slo.text);
	return ret ? CLI_OK : CLI_FAIL;
}
