/* Events sink dispatch: tolerate a NULL sink or NULL callbacks. */
#include "config.h"

#include "events.h"
#include "i18n.h"
#include "redact.h"
#include "xalloc.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void pw_events_log(const pw_events *ev, pw_log_level level, const char *fmt, ...)
{
	if (!ev || !ev->log)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	char *shown = pw_redact_text(msg);
	ev->log(ev->ud, level, shown);
	free(shown);
	free(msg);
}

void pw_events_progress(const pw_events *ev, const pw_progress *p)
{
	if (ev && ev->progress)
		ev->progress(ev->ud, p);
}

const char *pw_progress_stage_label(const char *stage)
{
	static const char *const names[] = { N_("download"), N_("verify"), N_("extract"), N_("probe"), N_("swap"),
					     N_("baseline") };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(stage, names[i]) == 0)
			return _(names[i]);
	return stage;
}
