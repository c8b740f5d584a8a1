/* Fuzz target: the scratchpad's framing as the host meets it. The input is
 * cut into reads (sizes from its first byte), fed to the line buffer, and
 * every complete line goes through the host's request parser; the output
 * capture and UTF-8 cleaning see the same bytes. */
/* sources: scratch_proto.c jsontext.c err.c redact.c xalloc.c */
#include "config.h"

#include "scratch_proto.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	size_t step = (size_t)data[0] % 17 + 1;
	data++;
	size--;
	pw_scratch_linebuf *lb = pw_scratch_linebuf_new();
	pw_scratch_capture *cap = pw_scratch_capture_new(64 + step);
	for (size_t off = 0; off < size; off += step) {
		size_t n = size - off < step ? size - off : step;
		if (!pw_scratch_linebuf_feed(lb, (const char *)data + off, n))
			abort(); /* far below the line limit: must be taken */
		pw_scratch_capture_add(cap, (const char *)data + off, n);
		char *line;
		while ((line = pw_scratch_linebuf_take(lb))) {
			pw_scratch_request r;
			pw_err *e = pw_scratch_request_parse(line, &r);
			if (e) {
				pw_err_free(e);
				if (r.session || r.code || r.env) /* a refused request leaves nothing behind */
					abort();
			} else {
				json_t *back = pw_scratch_request_encode(&r);
				size_t len;
				free(pw_scratch_dump_line(back, &len));
				json_decref(back);
				pw_scratch_request_clear(&r);
			}
			free(line);
		}
	}
	char *text = pw_scratch_capture_text(cap);
	if (pw_scratch_capture_total(cap) != size)
		abort();
	free(text);
	char *clean = pw_scratch_utf8_clean((const char *)data, size);
	json_t *js = json_string(clean);
	if (!js) /* cleaned text must be valid for JSON */
		abort();
	json_decref(js);
	free(clean);
	pw_scratch_capture_free(&cap);
	pw_scratch_linebuf_free(&lb);
	return 0;
}
