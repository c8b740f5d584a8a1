/* Fuzz target: the scratchpad's message decoders, as a client meets the
 * host's lines (result, session list, lease, error) and the host meets a
 * client's (request). One input is one line of any bytes. A decoded
 * result is also written directly (pw_scratch_result_dump) and must be
 * the bytes jansson writes. */
/* sources: scratch_proto.c jsontext.c err.c redact.c xalloc.c */
#include "config.h"

#include "scratch_proto.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void reencode(json_t *j)
{
	size_t len;
	free(pw_scratch_dump_line(j, &len));
	json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1);
	memcpy(line, data, size);
	line[size] = '\0';
	pw_scratch_request req;
	pw_err *e = pw_scratch_request_parse(line, &req);
	if (!e) {
		reencode(pw_scratch_request_encode(&req));
		pw_scratch_request_clear(&req);
	}
	pw_err_free(e);
	json_t *j = json_loads(line, JSON_DECODE_ANY, NULL);
	free(line);
	if (!j)
		return 0;
	pw_scratch_result *r = NULL;
	e = pw_scratch_result_decode(j, &r);
	if (!e) {
		(void)pw_scratch_result_exit_status(r);
		/* the text written directly is jansson's, byte for byte */
		json_t *enc = pw_scratch_result_encode(r);
		char *want = json_dumps(enc, JSON_COMPACT), *got = pw_scratch_result_dump(r, NULL);
		if (!want != !got || (want && strcmp(want, got) != 0))
			abort();
		free(want);
		free(got);
		reencode(enc);
		pw_scratch_result_free(&r);
	}
	pw_err_free(e);
	pw_scratch_list *l = NULL;
	e = pw_scratch_list_decode(j, &l);
	if (!e) {
		reencode(pw_scratch_list_encode(l));
		pw_scratch_list_free(&l);
	}
	pw_err_free(e);
	pw_scratch_lease_info lease;
	e = pw_scratch_lease_decode(j, &lease);
	if (!e) {
		reencode(pw_scratch_lease_encode(&lease));
		pw_scratch_lease_clear(&lease);
	}
	pw_err_free(e);
	e = pw_scratch_error_decode(j);
	if (e) {
		reencode(pw_scratch_error_encode(e));
		pw_err_free(e);
	}
	(void)pw_scratch_reply_status(j, size % 2);
	json_decref(j);
	return 0;
}
