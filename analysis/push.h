/* Sending metrics to a Prometheus Pushgateway over HTTP (libcurl). */
#ifndef COLDSTART_PUSH_H
#define COLDSTART_PUSH_H

#include <stddef.h>

/* The URL of a Pushgateway group: BASE/metrics/job/JOB/instance/INSTANCE
 * (BASE without its trailing '/'). A value that is not plain URL text
 * (letters, digits, '.', '_', '-', '~'; not "." or "..") goes in the
 * gateway's base64url form, "job@base64/...", so any host name makes one
 * path segment. A new string, or NULL when out of memory. */
char *push__group_url(const char *base, const char *job,
		      const char *instance);

/* PUTs `len` bytes of the Prometheus text format to `url`, replacing
 * the group's metrics. 0; -ENOTSUP when this coldstart was built without
 * libcurl; -EIO with a message naming the URL and what went wrong (curl's
 * error, or the HTTP status with the start of the gateway's answer). */
int push__put(const char *url, const char *body, size_t len);

#endif
