/* The guest init's memory-touch workload. Pure: the same code runs over
 * guest memory and, without memory, predicts the checksum it must give. */
#ifndef COLDSTART_INIT_WORK_H
#define COLDSTART_INIT_WORK_H

#include "cmdline.h"

#include <stdint.h>

/* Fixed, so a checksum names the workload ("cold"). */
#define INIT_TOUCH_SEED 0x636f6c64ull

/* Touches t->bytes / 4 KiB pages of `mem` (zero-filled, t->bytes long)
 * once each in t->pattern order, reading or writing one word per page, and
 * returns the checksum of the values read or written. mem == NULL returns
 * the checksum a correct run over zero-filled memory gives. */
uint64_t init_work__touch(const struct init_touch *t, volatile uint8_t *mem);

#endif
