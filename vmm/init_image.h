/* The static coldstart-init binary (vmm/guest/init), embedded at build
 * time: the bytes `coldstart image build` writes as the guest's /init. */
#ifndef COLDSTART_INIT_IMAGE_H
#define COLDSTART_INIT_IMAGE_H

#include <stdint.h>

extern const uint8_t init_image_start[];
extern const uint8_t init_image_end[];
/* The static coldstart-agent (vmm/guest/agent). */
extern const uint8_t agent_image_start[];
extern const uint8_t agent_image_end[];

#endif
