/*
 * Closing inherited descriptors in a freshly forked child before it runs
 * another program: a long-lived process (the scratchpad host, its
 * workers) must not keep its caller's pipes or files open, or a reader
 * waiting for end-of-file on them waits for that process's exit.
 */
#ifndef PW_CLOSEFDS_H
#define PW_CLOSEFDS_H

/* Close every descriptor >= first except keep (-1: none). Only
 * async-signal-safe calls: for use between fork and exec. */
void pw_close_fds_from(int first, int keep);

#endif
