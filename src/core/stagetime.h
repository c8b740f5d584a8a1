/*
 * Stage timings for the benches: when PYWARD_STAGE_TIMES names a file,
 * pw_stage_mark() notes the time of a named point (from any thread) and
 * the marks are appended to that file at exit, one "MS THREAD NAME" line
 * each (milliseconds since the first mark, which main() makes), then an
 * empty line. Without the variable a mark costs one load. Not for users:
 * no output of pyward changes; bench/README.md says how to read them.
 */
#ifndef PW_STAGETIME_H
#define PW_STAGETIME_H

/* NAME must be a string that lives as long as the process (a literal). */
void pw_stage_mark(const char *name);

#endif
