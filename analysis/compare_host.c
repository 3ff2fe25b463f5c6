/* Changes of one host between BASE and NEW that do not make them
 * different hosts but move timings: the kernel, the CPU microcode and
 * the KVM modules' parameters, as sysinfo records them. */
#include "compare.h"

#include <stdarg.h>
#include <string.h>

struct changes {
	char *buf;
	size_t len, used, n;
};

static void add(struct changes *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add(struct changes *c, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (c->used + 1 >= c->len)
		goto count;
	if (c->n)
		c->used += (size_t)snprintf(c->buf + c->used, c->len - c->used,
					    "; ");
	if (c->used + 1 >= c->len)
		goto count;
	va_start(ap, fmt);
	w = vsnprintf(c->buf + c->used, c->len - c->used, fmt, ap);
	va_end(ap);
	c->used = w < 0 ? c->used : c->used + (size_t)w;
	if (c->used >= c->len)
		c->used = c->len - 1;
count:
	c->n++;
}

/* sysinfo.a.b as a string, NULL when either side does not record it
 * (an older sysinfo): unknown is no change. */
static const char *field(const json_t *sys, const char *a, const char *b)
{
	return json_string_value(json_object_get(json_object_get(sys, a), b));
}

static void compare_field(struct changes *c, const json_t *x, const json_t *y,
			  const char *a, const char *b, const char *what)
{
	const char *u = field(x, a, b), *v = field(y, a, b);

	if (u && v && strcmp(u, v) && strlen(u) + strlen(v) < 80)
		add(c, "%s %s -> %s", what, u, v);
	else if (u && v && strcmp(u, v))
		add(c, "%s changed", what); /* too long to read in a line */
}

/* Every parameter both sides record for a module, and modules loaded on
 * one side only. */
static void compare_modules(struct changes *c, const json_t *x,
			    const json_t *y)
{
	const json_t *mx = json_object_get(json_object_get(x, "kvm"),
					   "modules");
	const json_t *my = json_object_get(json_object_get(y, "kvm"),
					   "modules");
	const char *mod, *par;
	const json_t *px, *vx;

	if (!json_is_object(mx) || !json_is_object(my))
		return;
	json_object_foreach((json_t *)mx, mod, px) {
		const json_t *py = json_object_get(my, mod);

		if (!py) {
			add(c, "module %s loaded only in BASE", mod);
			continue;
		}
		json_object_foreach((json_t *)px, par, vx) {
			const char *u = json_string_value(vx);
			const char *v = json_string_value(
				json_object_get(py, par));

			if (u && v && strcmp(u, v))
				add(c, "%s.%s %s -> %s", mod, par, u, v);
		}
	}
	json_object_foreach((json_t *)my, mod, px)
		if (!json_object_get(mx, mod))
			add(c, "module %s loaded only in NEW", mod);
}

size_t compare__host_changes(const struct result_doc *base,
			     const struct result_doc *new_, char *buf,
			     size_t len)
{
	struct changes c = { buf, len, 0, 0 };

	if (len)
		buf[0] = '\0';
	compare_field(&c, base->sysinfo, new_->sysinfo, "kernel", "release",
		      "kernel");
	compare_field(&c, base->sysinfo, new_->sysinfo, "kernel", "cmdline",
		      "kernel command line");
	compare_field(&c, base->sysinfo, new_->sysinfo, "cpu", "microcode",
		      "CPU microcode");
	compare_modules(&c, base->sysinfo, new_->sysinfo);
	return c.n;
}
