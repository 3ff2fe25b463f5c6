/* Host metadata recorded next to every result, so numbers from different
 * machines, kernels and tunings are never compared blindly. */
#ifndef COLDSTART_SYSINFO_H
#define COLDSTART_SYSINFO_H

#include <jansson.h>

/* Version of the object's layout; bumped when a key changes meaning.
 * 2: kvm describes a usable device (kvm__where) and the emulated host;
 * in 1, kvm.device was a boolean (/dev/kvm exists) and kvm.flavour named
 * a loaded module even when it provided no device. */
#define SYSINFO_SCHEMA 2

/*
 * The object, keys in this order; any value may be null when the host lacks
 * its source (no file, unparsable text), never a guess:
 *   schema       SYSINFO_SCHEMA
 *   coldstart    {version, commit} of this build
 *   hostname     uname nodename
 *   kernel       {release, version, machine (uname), cmdline}
 *   cpu          {model, microcode (cpuinfo strings), online_cpus,
 *                 smt (bool), governor (cpu0's cpufreq), flags_virt (array:
 *                 which of "vmx", "svm", "hypervisor" cpuinfo lists)}
 *   memory       {total_kib, thp_enabled, thp_defrag (the selected word,
 *                 e.g. "madvise"), ksm_run, ksm_pages_sharing,
 *                 hugepages_2m_total, hugepages_2m_free}
 *   kvm          where KVM runs (kvm__where): {device ("/dev/kvm" when
 *                 usable, else null), usable (opened and its API version
 *                 read), flavour (kvm__flavour_name; "none" when not
 *                 usable), api_version (null when the device could not be
 *                 asked), reason (why not usable; null when usable),
 *                 modules: {kvm, kvm_intel, kvm_amd, kvm_pvm when loaded:
 *                 {parameter: trimmed text}}, emulated ("qemu-tcg-svm"
 *                 inside the emulated SVM host, else null)}
 *   cgroup       {version: "v2", "hybrid", "v1"}
 *   mitigations  {vulnerabilities file: trimmed text}, sorted by name
 *   time_utc     "YYYY-MM-DDTHH:MM:SSZ" when collected
 * Reading it back from a stored document is resultfmt's (result.h:
 * result__sysinfo_emulated), which needs no host.
 */

/* Collects the object above. Returns 0 and stores a new object in *out (the
 * caller json_decref's it), or -ENOMEM with a message (err__last); a missing
 * source is never an error. */
int sysinfo__collect(json_t **out);

#endif
