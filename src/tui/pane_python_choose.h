/*
 * The Python pane's interpreter chooser: a job that lists what a session
 * can run on (the managed runtime, and the environments discovery finds in
 * the workspace's roots, as pane 3 lists them), and a small list the pane
 * draws in place of its transcript while the user picks one.
 */
#ifndef PW_TUI_PANE_PYTHON_CHOOSE_H
#define PW_TUI_PANE_PYTHON_CHOOSE_H

#include "tui/draw.h"
#include "tui/worker.h"

#include <stdbool.h>
#include <stddef.h>

struct pw_ops_ctx;

typedef struct pw_pychoice {
	char *python;  /* the interpreter */
	char *venv;    /* its environment, or NULL for the managed runtime */
	char *version; /* or NULL */
} pw_pychoice;

typedef struct pw_pyfind pw_pyfind;

/* The job: discovery (bounded like pane 3's) and the runtime's state. */
pw_pyfind *pw_pyfind_new(const struct pw_ops_ctx *ctx);
pw_err *pw_pyfind_run(pw_job *job, void *ud);
void pw_pyfind_free(void *ud);

typedef struct pw_pychooser pw_pychooser;

typedef enum pw_pychooser_answer { PW_PYCH_MORE, PW_PYCH_PICKED, PW_PYCH_CANCELLED } pw_pychooser_answer;

/* A chooser over what the job found (taken from it); current (may be
 * NULL) is marked and selected. NULL when nothing was found. */
pw_pychooser *pw_pychooser_new(pw_pyfind *found, const char *current);
void pw_pychooser_free(pw_pychooser **ch);
pw_pychooser_answer pw_pychooser_key(pw_pychooser *ch, int key);
const pw_pychoice *pw_pychooser_selected(const pw_pychooser *ch);
void pw_pychooser_draw(const pw_pychooser *ch, WINDOW *win, int y, int x, int h, int w);

#endif
