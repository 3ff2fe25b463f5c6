/* `coldstart bench suite`: every benchmark driver in turn with quick (or
 * smoke-test) parameters into one directory, the harness's own overhead
 * per sample, then the report over everything written. */
#ifndef COLDSTART_SUITE_H
#define COLDSTART_SUITE_H

#include "drivers.h"

/* The suite as a `coldstart bench` driver: in the emulated host when
 * this host has no usable /dev/kvm (--emulate, --no-emulate). */
extern const struct bench_driver suite__driver;

#endif
