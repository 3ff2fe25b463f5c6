/* push__put with libcurl: one PUT, its status checked. */
#include "push.h"

#include "err.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

/* The whole push, connection included, may take this long. */
#define PUSH_TIMEOUT_S 30L

struct upload {
	const char *data;
	size_t left;
};

/* The start of the gateway's answer, for the error message. */
struct answer {
	char text[256];
	size_t len;
};

static size_t read_body(char *buf, size_t size, size_t n, void *arg)
{
	struct upload *u = arg;
	size_t k = size * n < u->left ? size * n : u->left;

	memcpy(buf, u->data, k);
	u->data += k;
	u->left -= k;
	return k;
}

static size_t keep_answer(char *buf, size_t size, size_t n, void *arg)
{
	struct answer *a = arg;
	size_t room = sizeof(a->text) - 1 - a->len;
	size_t k = size * n < room ? size * n : room;

	memcpy(a->text + a->len, buf, k);
	a->len += k;
	a->text[a->len] = '\0';
	return size * n;
}

static void setup(CURL *c, const char *url, struct upload *u,
		  struct answer *a, struct curl_slist *headers, char *errbuf)
{
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(c, CURLOPT_READFUNCTION, read_body);
	curl_easy_setopt(c, CURLOPT_READDATA, u);
	curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)u->left);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_answer);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, a);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, PUSH_TIMEOUT_S);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
}

/* 0 for a 2xx answer, else -EIO with the status and the answer's start. */
static int check_status(CURL *c, const char *url, struct answer *a)
{
	long status = 0;

	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status < 300)
		return 0;
	a->text[strcspn(a->text, "\r\n")] = '\0';
	return err__set(EIO, "pushing to %s: HTTP status %ld%s%s", url, status,
			a->len ? ": " : "", a->text);
}

int push__put(const char *url, const char *body, size_t len)
{
	struct upload u = { body, len };
	struct answer a = { .len = 0 };
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *headers = NULL, *h;
	CURL *c;
	CURLcode res;
	int ret;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    !(c = curl_easy_init()))
		return err__set(EIO, "pushing to %s: libcurl failed to start",
				url);
	/* no "Expect: 100-continue" round trip before the body */
	h = curl_slist_append(headers, "Content-Type: text/plain; version=0.0.4");
	headers = h ? curl_slist_append(h, "Expect:") : NULL;
	if (!headers) {
		curl_slist_free_all(h);
		curl_easy_cleanup(c);
		curl_global_cleanup();
		return err__set(ENOMEM, "pushing to %s: out of memory", url);
	}
	setup(c, url, &u, &a, headers, errbuf);
	res = curl_easy_perform(c);
	if (res != CURLE_OK)
		ret = err__set(EIO, "pushing to %s: %s", url,
			       *errbuf ? errbuf : curl_easy_strerror(res));
	else
		ret = check_status(c, url, &a);
	curl_slist_free_all(headers);
	curl_easy_cleanup(c);
	curl_global_cleanup();
	return ret;
}
