/* One probe-guest VM, start to finish. */
#include "runner.h"

#include "err.h"

#include <stdio.h>
#include <string.h>

/* The VM runner__interrupt() stops; set only while a VM runs. */
static struct vm *volatile active_vm;

uint64_t runner__min_mem(const struct probe_params *p)
{
	uint64_t work = p->init_bytes > p->ws_bytes ? p->init_bytes
						    : p->ws_bytes;

	work = (work + MEM_ALIGN - 1) / MEM_ALIGN * MEM_ALIGN;
	return PROBE_WORK_GPA + work;
}

void runner__interrupt(void)
{
	struct vm *vm = active_vm;

	if (vm)
		vm__interrupt(vm);
}

static void collect(const struct run_config *cfg, struct vm *vm,
		    const struct probe *probe, struct run_result *res)
{
	res->outcome = vm->outcome;
	snprintf(res->reason, sizeof(res->reason), "%s", vm->reason);
	probe__save_state(probe, &res->probe);
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		res->exits += vm->vcpus[i].exits;
	if (cfg->measure_memory &&
	    memstat__self(&res->memory, vm->mem.host) == 0)
		res->have_memory = true;
}

struct vm_config runner__vm_config(const struct run_config *cfg)
{
	return (struct vm_config){
		.mem_size = cfg->mem_size,
		.nr_vcpus = cfg->nr_vcpus,
		.mem_ops = cfg->mem_ops,
		.strict_io = true,
		.cpuid = cfg->cpuid,
	};
}

int runner__probe(struct kvm_host *kvm, const struct run_config *cfg,
		  struct run_result *res)
{
	struct vm_config vcfg = runner__vm_config(cfg);
	struct probe probe;
	struct vm *vm;
	int ret = probe__validate(&cfg->probe, cfg->mem_size, cfg->nr_vcpus);

	if (ret < 0)
		return ret;
	ret = vm__create(kvm, &vcfg, &res->tl, &vm);
	if (ret < 0)
		return ret;
	ret = probe__setup(&probe, vm, &cfg->probe);
	if (ret == 0) {
		active_vm = vm;
		ret = vm__start(vm);
	}
	if (ret == 0) {
		vm__wait(vm, cfg->timeout_ns);
		collect(cfg, vm, &probe, res);
		if (cfg->before_teardown)
			cfg->before_teardown(vm);
	}
	active_vm = NULL;
	vm__destroy(vm);
	timeline__mark(&res->tl, TL_TEARDOWN_DONE);
	if (ret == 0 && cfg->verify)
		res->expected_checksum =
			probe__expected_checksum(&cfg->probe, cfg->nr_vcpus);
	res->checksum_ok = res->expected_checksum == res->probe.checksum;
	return ret;
}

bool runner__succeeded(const struct run_config *cfg,
		       const struct run_result *res)
{
	if (res->outcome != VM_COMPLETED)
		return false;
	if (cfg->probe.stop_at_ready || !cfg->verify)
		return true;
	return res->probe.done == cfg->nr_vcpus && res->checksum_ok;
}
