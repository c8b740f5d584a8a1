/* Open addressing with linear probing, kept at most half full. */
#include "config.h"

#include "nameset.h"
#include "xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct slot {
	char *name; /* NULL: empty */
	size_t len;
	uint64_t hash;
	int value;
};

struct pw_nameset {
	struct slot *slots;
	size_t cap; /* a power of two */
	size_t used;
};

/* FNV-1a: short paths, no hostile-collision concern worth more (an
 * archive is bounded by its entry limit, and a collision only costs time). */
static uint64_t hash_of(const char *name, size_t len)
{
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 1099511628211ull;
	return h;
}

pw_nameset *pw_nameset_new(void)
{
	pw_nameset *s = xcalloc(1, sizeof *s);
	s->cap = 256;
	s->slots = xcalloc(s->cap, sizeof *s->slots);
	return s;
}

static struct slot *find(const pw_nameset *s, const char *name, size_t len, uint64_t h)
{
	for (size_t i = h & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
		struct slot *sl = &s->slots[i];
		if (!sl->name || (sl->hash == h && sl->len == len && memcmp(sl->name, name, len) == 0))
			return sl;
	}
}

int pw_nameset_get(const pw_nameset *s, const char *name, size_t len)
{
	const struct slot *sl = find(s, name, len, hash_of(name, len));
	return sl->name ? sl->value : 0;
}

static void grow(pw_nameset *s)
{
	struct slot *old = s->slots;
	size_t old_cap = s->cap;
	s->cap *= 2;
	s->slots = xcalloc(s->cap, sizeof *s->slots);
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].name)
			*find(s, old[i].name, old[i].len, old[i].hash) = old[i];
	free(old);
}

void pw_nameset_put(pw_nameset *s, const char *name, size_t len, int value)
{
	uint64_t h = hash_of(name, len);
	struct slot *sl = find(s, name, len, h);
	if (!sl->name) {
		if (2 * (s->used + 1) > s->cap) {
			grow(s);
			sl = find(s, name, len, h);
		}
		sl->name = xstrndup(name, len);
		sl->len = len;
		sl->hash = h;
		s->used++;
	}
	sl->value = value;
}

void pw_nameset_free(pw_nameset **s)
{
	if (!s || !*s)
		return;
	for (size_t i = 0; i < (*s)->cap; i++)
		free((*s)->slots[i].name);
	free((*s)->slots);
	free(*s);
	*s = NULL;
}
