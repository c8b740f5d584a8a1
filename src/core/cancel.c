/* Cancel token backed by a lock-free atomic flag (safe from signal handlers). */
#include "config.h"

#include "cancel.h"
#include "xalloc.h"

#include <stdatomic.h>
#include <stdlib.h>

struct pw_cancel {
	atomic_int raised;
};

pw_cancel *pw_cancel_new(void)
{
	pw_cancel *c = xmalloc(sizeof *c);
	atomic_init(&c->raised, 0);
	return c;
}

void pw_cancel_free(pw_cancel **c)
{
	if (!c)
		return;
	free(*c);
	*c = NULL;
}

void pw_cancel_raise(pw_cancel *c)
{
	if (c)
		atomic_store(&c->raised, 1);
}

bool pw_cancel_raised(const pw_cancel *c)
{
	return c && atomic_load(&c->raised);
}

void pw_cancel_reset(pw_cancel *c)
{
	if (c)
		atomic_store(&c->raised, 0);
}
