/* The sanitizer settings each fuzz target starts with (ASAN_OPTIONS in
 * the environment still overrides them); both only make the targets
 * faster, every check stays. */
const char *__asan_default_options(void);

const char *__asan_default_options(void)
{
	/* clear_shadow_mmap_threshold: a block's shadow is cleared with
	 * memset up to 1 MiB of shadow (8 MiB of memory) instead of by
	 * mapping zero pages over it, which the default 64 KiB did for each
	 * 1 MiB buffer of a snapshot merge, a TLB shootdown each time.
	 * quarantine_size_mb: freed memory is reused after 64 MiB of other
	 * frees, not 256 MiB, still far more than one input frees, so a use
	 * after free within an input is caught as before; cycling through
	 * less memory costs fewer cache misses and page faults. */
	return "clear_shadow_mmap_threshold=1048576:quarantine_size_mb=64";
}
