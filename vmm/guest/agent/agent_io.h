/* The agent's side of agent_abi.h: one connection's requests served. */
#ifndef COLDSTART_AGENT_IO_H
#define COLDSTART_AGENT_IO_H

#include "../agent_abi.h"

#include <stddef.h>
#include <stdint.h>

/* A line on stderr (the guest's console) starting "coldstart-agent: ". */
void agent__say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Serves requests on `fd` until the host closes it or breaks the
 * protocol; returns the process's exit status (0 on a clean close). */
int agent__serve(int fd);

#endif
