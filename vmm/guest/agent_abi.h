/* The protocol between coldstart's guest agent (vmm/guest/agent/) and the
 * host (vmm/agent_client.c) over one stream: vsock in a VM, or a Unix
 * socket when the agent is tested on the host. Every message is a frame:
 * one type byte, the payload's length as 4 bytes little-endian, the
 * payload. Self-contained, so the static guest build includes it too.
 *
 *   host -> agent                       agent -> host
 *   EXEC  "sh -c" command               OUT, ERR chunks, then STATUS
 *   PUT   mode (4 bytes LE) + path,     OK, or FAIL message
 *         then DATA chunks and END
 *   GET   path                          DATA chunks then OK, or FAIL
 *
 * STATUS is 4 bytes little-endian: the exit code, or 128 + the signal
 * that killed the command, as a shell reports it. A connection carries
 * any number of requests, one after another. */
#ifndef COLDSTART_AGENT_ABI_H
#define COLDSTART_AGENT_ABI_H

#include <stdint.h>

/* The vsock port the agent listens on unless told another. */
#define AGENT_PORT 1024u
/* A frame's payload at most: bigger files go in several DATA frames. */
#define AGENT_FRAME_MAX (256u * 1024u)
#define AGENT_HEADER_SIZE 5u
/* A path in PUT or GET at most, in bytes. */
#define AGENT_PATH_MAX 4095u

enum agent_frame {
	AGENT_EXEC = 'X',
	AGENT_PUT = 'P',
	AGENT_GET = 'G',
	AGENT_DATA = 'D',
	AGENT_END = 'Z',
	AGENT_OUT = 'O',
	AGENT_ERR = 'E',
	AGENT_STATUS = 'S',
	AGENT_OK = 'K',
	AGENT_FAIL = '!',
};

static inline void agent_abi__put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t agent_abi__get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

#endif
