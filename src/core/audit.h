/*
 * Audit events: every finished operation, as one structured event for the
 * logging a machine already runs, so journald or rsyslog forwarding can
 * carry each box's history to a fleet's central store (no catalog is ever
 * shared over the network).
 *
 * Targets (setting audit_log): "journal" (sd_journal_sendv, libsystemd
 * loaded on first use, PYWARD_* fields), "syslog" (an RFC 5424 message with
 * structured data, one datagram to the syslog socket: audit_syslog_socket,
 * default /dev/log), "journal-or-syslog" (the default: the journal when its
 * socket exists, else syslog) and "none".
 *
 * Sending never blocks and never fails the operation it reports: a failure
 * is counted (pw_audit_failures) for the HTTP API's /metrics. The settings
 * are process-wide; pw_audit_configure may be called again (a later box).
 */
#ifndef PW_AUDIT_H
#define PW_AUDIT_H

#include "catalog.h"
#include "err.h"

#include <stdint.h>

/* Where the journal listens; an event goes there only when it exists. */
#define PW_AUDIT_JOURNAL_SOCKET "/run/systemd/journal/socket"
#define PW_AUDIT_SYSLOG_SOCKET "/dev/log"
/* The MESSAGE_ID of every pyward operation event (journalctl MESSAGE_ID=...). */
#define PW_AUDIT_MESSAGE_ID "3b89e780301349588f2b4ed39aca630a"

/* audit_log and audit_syslog_socket as set (either may be NULL: default).
 * PW_ERR_USAGE for an unknown audit_log value. */
pw_err *pw_audit_configure(const char *audit_log, const char *syslog_socket);

/* Send the event of a finished operation (its record as read back). */
void pw_audit_operation(const pw_op_rec *op);

/* Counters since the process started. */
uint64_t pw_audit_sent(void);
uint64_t pw_audit_failures(void);
/* Where the last event went: "journal", "syslog", "none", or "" before any. */
const char *pw_audit_last_target(void);

/* The RFC 5424 message for op (allocated), without sending it: the syslog
 * path's text, for tests. */
char *pw_audit_syslog_text(const pw_op_rec *op);

#endif
