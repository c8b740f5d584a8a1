/* Fuzz target: the worker reply scanner (scratch_reply.c). One input is
 * one line of any bytes; whatever the scanner takes must agree with
 * jansson and give the same result text (fuzz/reply_oracle.h). */
/* sources: scratch_reply.c scratch_proto.c jsontext.c err.c redact.c xalloc.c */
#include "config.h"

#include "reply_oracle.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool scanned;
	if (reply_disagreement((const char *)data, size, &scanned))
		abort();
	return 0;
}
