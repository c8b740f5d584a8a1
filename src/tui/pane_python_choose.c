/* The Python pane's interpreter chooser: find the candidates, pick one. */
#include "config.h"

#include "tui/pane_python_choose.h"

#include "tui/keys.h"

#include "ops/ctx.h"
#include "ops/venvops.h"

#include "clock.h"
#include "i18n.h"
#include "runtime.h"
#include "venv.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

struct pw_pyfind {
	const pw_ops_ctx *ctx;
	char *runtime_python, *runtime_version;
	pw_venv_list list;
};

struct pw_pychooser {
	pw_pychoice *items;
	size_t count, selected, current; /* current == count: none */
	bool truncated;
};

pw_pyfind *pw_pyfind_new(const pw_ops_ctx *ctx)
{
	pw_pyfind *f = xcalloc(1, sizeof *f);
	f->ctx = ctx;
	return f;
}

pw_err *pw_pyfind_run(pw_job *job, void *ud)
{
	(void)job;
	pw_pyfind *f = ud;
	pw_runtime_info info;
	memset(&info, 0, sizeof info);
	pw_err *e = pw_runtime_status(f->ctx->box_root, &info);
	if (!e && info.state == PW_RUNTIME_INSTALLED && info.python) {
		f->runtime_python = xstrdup(info.python);
		f->runtime_version = info.version ? xstrdup(info.version) : NULL;
	}
	pw_err_free(e);
	pw_runtime_info_clear(&info);
	return pw_venv_discover(f->ctx->guard, NULL, 2, 256,
				pw_clock_deadline_after(pw_ops_budget(f->ctx, PW_VENV_DISCOVER_BUDGET_S)),
				&f->list);
}

void pw_pyfind_free(void *ud)
{
	pw_pyfind *f = ud;
	free(f->runtime_python);
	free(f->runtime_version);
	pw_venv_list_clear(&f->list);
	free(f);
}

static void add(pw_pychooser *ch, const char *python, const char *venv, const char *version)
{
	ch->items = xrealloc(ch->items, (ch->count + 1) * sizeof *ch->items);
	ch->items[ch->count++] = (pw_pychoice){
	    .python = xstrdup(python),
	    .venv = venv ? xstrdup(venv) : NULL,
	    .version = version ? xstrdup(version) : NULL,
	};
}

pw_pychooser *pw_pychooser_new(pw_pyfind *f, const char *current)
{
	pw_pychooser *ch = xcalloc(1, sizeof *ch);
	if (f->runtime_python)
		add(ch, f->runtime_python, NULL, f->runtime_version);
	for (size_t i = 0; i < f->list.count; i++)
		if (f->list.items[i].python && f->list.items[i].python_exists)
			add(ch, f->list.items[i].python, f->list.items[i].path, f->list.items[i].version);
	ch->truncated = f->list.truncated;
	if (ch->count == 0) {
		pw_pychooser_free(&ch);
		return NULL;
	}
	ch->current = ch->count;
	for (size_t i = 0; current && i < ch->count; i++)
		if (strcmp(ch->items[i].python, current) == 0)
			ch->current = ch->selected = i;
	return ch;
}

void pw_pychooser_free(pw_pychooser **ch)
{
	if (!ch || !*ch)
		return;
	for (size_t i = 0; i < (*ch)->count; i++) {
		free((*ch)->items[i].python);
		free((*ch)->items[i].venv);
		free((*ch)->items[i].version);
	}
	free((*ch)->items);
	free(*ch);
	*ch = NULL;
}

pw_pychooser_answer pw_pychooser_key(pw_pychooser *ch, int key)
{
	switch (key) {
	case KEY_UP:
	case 'k':
		if (ch->selected > 0)
			ch->selected--;
		break;
	case KEY_DOWN:
	case 'j':
		if (ch->selected + 1 < ch->count)
			ch->selected++;
		break;
	case '\r':
	case '\n':
	case KEY_ENTER:
		return PW_PYCH_PICKED;
	case PW_KEY_ESC:
	case PW_KEY_CTRL('c'):
		return PW_PYCH_CANCELLED;
	}
	return PW_PYCH_MORE;
}

const pw_pychoice *pw_pychooser_selected(const pw_pychooser *ch)
{
	return &ch->items[ch->selected];
}

void pw_pychooser_draw(const pw_pychooser *ch, WINDOW *win, int y, int x, int h, int w)
{
	pw_draw_set(win, PW_C_LABEL);
	pw_draw_text(win, y, x, w, _("Interpreter (Enter picks, Esc keeps the current one, * marks it):"));
	int rows = h - 2;
	size_t top = (int)ch->selected >= rows ? ch->selected - (size_t)rows + 1 : 0;
	for (int r = 0; r < rows && top + (size_t)r < ch->count; r++) {
		size_t i = top + (size_t)r;
		const pw_pychoice *c = &ch->items[i];
		char *line =
		    xasprintf("%s %-8s %s", i == ch->current ? "*" : " ", c->version ? c->version : "?",
			      c->venv ? c->venv : _("managed runtime"));
		pw_draw_set(win, i == ch->selected ? PW_C_SELECTED : PW_C_NORMAL);
		pw_draw_cell(win, y + 1 + r, x, w, line);
		free(line);
	}
	pw_draw_set(win, PW_C_DIM);
	if (ch->truncated)
		pw_draw_text(win, y + h - 1, x, w,
			     _("discovery stopped at its limit: some environments may be missing"));
	pw_draw_set(win, PW_C_NORMAL);
}
