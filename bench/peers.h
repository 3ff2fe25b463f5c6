/* `coldstart bench peers`: the trivial-guest lifecycle, or a Linux guest
 * on its root disk, under QEMU microvm beside coldstart, in one
 * interleaved run, as ratios. */
#ifndef COLDSTART_PEERS_H
#define COLDSTART_PEERS_H

#include "driver.h"

extern const struct bench_driver peers_driver;

/* The status QEMU exits with when the peer guest ran: isa-debug-exit
 * turns the guest's byte 0x10 into (0x10 << 1) | 1. */
#define PEERS_QEMU_GUEST_STATUS 33

#endif
