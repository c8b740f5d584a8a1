/* Scratchpad protocol: framing, bounded capture, message encode/decode. */
#include "config.h"

#include "scratch_proto.h"

#include "jsontext.h"

#include "i18n.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool pw_scratch_session_name_ok(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > 64)
		return false;
	return strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

/* ---------------------------------------------------------------- framing */

struct pw_scratch_linebuf {
	char *buf;
	size_t len, cap, start;
};

pw_scratch_linebuf *pw_scratch_linebuf_new(void)
{
	return xcalloc(1, sizeof(pw_scratch_linebuf));
}

void pw_scratch_linebuf_free(pw_scratch_linebuf **lb)
{
	if (!lb || !*lb)
		return;
	free((*lb)->buf);
	free(*lb);
	*lb = NULL;
}

bool pw_scratch_linebuf_feed(pw_scratch_linebuf *lb, const char *data, size_t len)
{
	if (lb->start > 0 && lb->start == lb->len)
		lb->start = lb->len = 0;
	if (lb->len - lb->start + len > PW_SCRATCH_MAX_LINE)
		return false;
	if (lb->len + len > lb->cap) {
		/* slide the unread part to the front before growing */
		if (lb->start)
			memmove(lb->buf, lb->buf + lb->start, lb->len - lb->start);
		lb->len -= lb->start;
		lb->start = 0;
		while (lb->len + len > lb->cap)
			lb->cap = lb->cap ? lb->cap * 2 : 4096;
		lb->buf = xrealloc(lb->buf, lb->cap);
	}
	memcpy(lb->buf + lb->len, data, len);
	lb->len += len;
	return true;
}

char *pw_scratch_linebuf_take(pw_scratch_linebuf *lb)
{
	char *from = lb->buf + lb->start;
	char *nl = lb->len > lb->start ? memchr(from, '\n', lb->len - lb->start) : NULL;
	if (!nl)
		return NULL;
	char *line = xstrndup(from, (size_t)(nl - from));
	lb->start += (size_t)(nl - from) + 1;
	return line;
}

/* ---------------------------------------------------------------- capture */

struct pw_scratch_capture {
	size_t limit, head_cap, tail_cap;
	char *head;
	size_t head_len;
	char *tail;        /* ring of the last tail_cap bytes past the head */
	size_t tail_pos;   /* next write position in the ring */
	size_t tail_len;
	size_t total;
};

pw_scratch_capture *pw_scratch_capture_new(size_t limit)
{
	pw_scratch_capture *c = xcalloc(1, sizeof *c);
	pw_scratch_capture_reset(c, limit);
	return c;
}

void pw_scratch_capture_reset(pw_scratch_capture *c, size_t limit)
{
	if (limit == 0)
		limit = PW_SCRATCH_DEFAULT_MAX_OUTPUT;
	c->head_len = c->tail_pos = c->tail_len = c->total = 0;
	if (c->head && limit == c->limit)
		return; /* the common case between cells: keep the buffers */
	free(c->head);
	free(c->tail);
	c->limit = limit;
	c->head_cap = limit / 2;
	c->tail_cap = limit - c->head_cap;
	c->head = xmalloc(c->head_cap + 1);
	c->tail = xmalloc(c->tail_cap + 1);
	c->head_len = c->tail_pos = c->tail_len = c->total = 0;
}

void pw_scratch_capture_free(pw_scratch_capture **c)
{
	if (!c || !*c)
		return;
	free((*c)->head);
	free((*c)->tail);
	free(*c);
	*c = NULL;
}

void pw_scratch_capture_add(pw_scratch_capture *c, const char *data, size_t len)
{
	c->total += len;
	size_t to_head = c->head_cap - c->head_len;
	if (to_head > len)
		to_head = len;
	memcpy(c->head + c->head_len, data, to_head);
	c->head_len += to_head;
	data += to_head;
	len -= to_head;
	if (len > c->tail_cap) { /* only the last tail_cap bytes can survive */
		data += len - c->tail_cap;
		len = c->tail_cap;
	}
	for (size_t i = 0; i < len; i++) {
		c->tail[c->tail_pos] = data[i];
		c->tail_pos = (c->tail_pos + 1) % c->tail_cap;
	}
	c->tail_len = c->tail_len + len > c->tail_cap ? c->tail_cap : c->tail_len + len;
}

size_t pw_scratch_capture_total(const pw_scratch_capture *c)
{
	return c->total;
}

size_t pw_scratch_capture_dropped(const pw_scratch_capture *c)
{
	return c->total - c->head_len - c->tail_len;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if none. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	if (s[0] >= 0x01 && s[0] < 0x80)
		return 1;
	size_t len = s[0] >= 0xC2 && s[0] <= 0xDF ? 2 : s[0] >= 0xE0 && s[0] <= 0xEF ? 3
		   : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : 0;
	if (len == 0 || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	/* overlong forms, surrogates, and beyond U+10FFFF */
	if ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] >= 0xA0) || (s[0] == 0xF0 && s[1] < 0x90) ||
	    (s[0] == 0xF4 && s[1] >= 0x90))
		return 0;
	return len;
}

char *pw_scratch_utf8_clean(const char *s, size_t len)
{
	char *out = xmalloc(len * 3 + 1);
	size_t k = 0;
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < len;) {
		size_t n = utf8_seq(u + i, len - i);
		if (n) {
			memcpy(out + k, s + i, n);
			k += n;
			i += n;
		} else {
			memcpy(out + k, "\xEF\xBF\xBD", 3);
			k += 3;
			i++;
		}
	}
	out[k] = '\0';
	return out;
}

char *pw_scratch_capture_text(const pw_scratch_capture *c)
{
	size_t dropped = pw_scratch_capture_dropped(c);
	char *marker = dropped ? xasprintf(_("\n[... %zu bytes not shown ...]\n"), dropped) : xstrdup("");
	size_t mlen = strlen(marker);
	char *out = xmalloc(c->head_len + mlen + c->tail_len + 1);
	memcpy(out, c->head, c->head_len);
	memcpy(out + c->head_len, marker, mlen);
	size_t start = c->tail_len < c->tail_cap ? 0 : c->tail_pos;
	for (size_t i = 0; i < c->tail_len; i++)
		out[c->head_len + mlen + i] = c->tail[(start + i) % c->tail_cap];
	size_t total = c->head_len + mlen + c->tail_len;
	free(marker);
	char *clean = pw_scratch_utf8_clean(out, total);
	free(out);
	return clean;
}

/* ---------------------------------------------------------------- helpers */

static const char *op_names[] = { "run", "interrupt", "discard", "list", "lease", "release" };

static char *dup_or_null(const json_t *j, const char *key)
{
	const char *s = json_string_value(json_object_get(j, key));
	return s ? xstrdup(s) : NULL;
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static int64_t int_of(const json_t *j, const char *key)
{
	return (int64_t)json_integer_value(json_object_get(j, key));
}

char *pw_scratch_dump_line(const json_t *j, size_t *len)
{
	char *s = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII);
	if (!s)
		abort(); /* only on out-of-memory: jansson encodes any tree we build */
	size_t n = strlen(s);
	char *line = xmalloc(n + 2);
	memcpy(line, s, n);
	line[n] = '\n';
	line[n + 1] = '\0';
	free(s);
	if (len)
		*len = n + 1;
	return line;
}

char *pw_scratch_cell_line(int64_t id, const char *code, size_t *len)
{
	for (const unsigned char *p = (const unsigned char *)code; *p; p++)
		if (*p >= 0x80) { /* escaped as \uXXXX: jansson's business */
			json_t *msg = json_pack("{s:I, s:s}", "id", (json_int_t)id, "code", code);
			char *line = pw_scratch_dump_line(msg, len);
			json_decref(msg);
			return line;
		}
	pw_jsontext t = { 0 };
	PW_JSONTEXT_LIT(&t, "{\"id\":");
	pw_jsontext_int(&t, id);
	PW_JSONTEXT_LIT(&t, ",\"code\":");
	pw_jsontext_str(&t, code);
	PW_JSONTEXT_LIT(&t, "}\n");
	return pw_jsontext_take(&t, len);
}

/* ---------------------------------------------------------------- requests */

json_t *pw_scratch_request_encode(const pw_scratch_request *r)
{
	json_t *j = json_pack("{s:s, s:o}", "op", op_names[r->op], "session", str_or_null(r->session));
	if (r->op == PW_SCRATCH_OP_RELEASE) {
		json_object_set_new(j, "executions", json_integer(r->executions));
		json_object_set_new(j, "lost_kind", str_or_null(r->lost_kind));
		json_object_set_new(j, "lost_message", str_or_null(r->lost_message));
	}
	if (r->op != PW_SCRATCH_OP_RUN)
		return j;
	json_object_set_new(j, "code", str_or_null(r->code));
	json_object_set_new(j, "reset", json_boolean(r->reset));
	json_object_set_new(j, "python", str_or_null(r->python));
	json_object_set_new(j, "python_explicit", json_boolean(r->python_explicit));
	json_object_set_new(j, "venv", str_or_null(r->venv));
	json_object_set_new(j, "project_dir", str_or_null(r->project_dir));
	if (r->env) { /* absent: the host keeps the session's last one */
		json_t *env = json_array();
		for (char **e = r->env; *e; e++)
			json_array_append_new(env, json_string(*e));
		json_object_set_new(j, "env", env);
	}
	json_object_set_new(j, "timeout_ms", json_integer(r->timeout_ms));
	json_object_set_new(j, "max_output", json_integer((json_int_t)r->max_output));
	return j;
}

static pw_err *bad_request(const char *what)
{
	return pw_err_new(PW_ERR_USAGE, NULL, _("malformed scratchpad request: %s"), what);
}

static char **decode_env(const json_t *arr)
{
	size_t n = json_array_size(arr);
	char **env = xcalloc(n + 1, sizeof *env);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const char *s = json_string_value(json_array_get(arr, i));
		if (s && strchr(s, '='))
			env[k++] = xstrdup(s);
	}
	return env;
}

pw_err *pw_scratch_request_decode(const json_t *j, pw_scratch_request *r)
{
	memset(r, 0, sizeof *r);
	const char *op = json_string_value(json_object_get(j, "op"));
	if (!op)
		return bad_request("no op");
	size_t i;
	for (i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
		if (strcmp(op, op_names[i]) == 0)
			break;
	if (i == sizeof op_names / sizeof op_names[0])
		return bad_request(op);
	r->op = (pw_scratch_op)i;
	r->session = dup_or_null(j, "session");
	if (r->op != PW_SCRATCH_OP_LIST && (!r->session || !*r->session))
		return bad_request("no session");
	/* A name goes into the record file and onto terminals: the same
	 * rule as the command line's, whoever sent it. */
	if (r->session && r->op != PW_SCRATCH_OP_LIST && !pw_scratch_session_name_ok(r->session))
		return bad_request("session name (1 to 64 of A-Z a-z 0-9 . _ -)");
	if (r->op == PW_SCRATCH_OP_RELEASE) {
		r->executions = int_of(j, "executions");
		r->lost_kind = dup_or_null(j, "lost_kind");
		r->lost_message = dup_or_null(j, "lost_message");
		if (r->executions < 0 || (r->lost_kind && !r->lost_message))
			return bad_request("release");
	}
	if (r->op != PW_SCRATCH_OP_RUN)
		return NULL;
	r->code = dup_or_null(j, "code");
	r->reset = json_is_true(json_object_get(j, "reset"));
	r->python = dup_or_null(j, "python");
	r->python_explicit = json_is_true(json_object_get(j, "python_explicit"));
	r->venv = dup_or_null(j, "venv");
	r->project_dir = dup_or_null(j, "project_dir");
	if (json_is_array(json_object_get(j, "env")))
		r->env = decode_env(json_object_get(j, "env"));
	r->timeout_ms = int_of(j, "timeout_ms");
	json_int_t mo = json_integer_value(json_object_get(j, "max_output"));
	r->max_output = mo > 0 ? (size_t)mo : 0;
	if (!r->code && !r->reset)
		return bad_request("no code");
	if (!r->python || !r->project_dir || r->python[0] != '/' || r->project_dir[0] != '/')
		return bad_request("python and project_dir must be absolute paths");
	return NULL;
}

pw_err *pw_scratch_request_parse(const char *line, pw_scratch_request *r)
{
	memset(r, 0, sizeof *r);
	json_error_t jerr;
	json_t *j = json_loads(line, 0, &jerr);
	if (!j)
		return bad_request("not JSON");
	pw_err *e = json_is_object(j) ? pw_scratch_request_decode(j, r) : bad_request("not a JSON object");
	json_decref(j);
	if (e)
		pw_scratch_request_clear(r);
	return e;
}

void pw_scratch_request_clear(pw_scratch_request *r)
{
	free(r->session);
	free(r->code);
	free(r->python);
	free(r->venv);
	free(r->project_dir);
	for (char **e = r->env; e && *e; e++)
		free(*e);
	free(r->env);
	free(r->lost_kind);
	free(r->lost_message);
	memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------- leases */

json_t *pw_scratch_lease_encode(const pw_scratch_lease_info *l)
{
	return json_pack("{s:{s:s, s:I, s:I, s:I, s:I}}", "lease", "session", l->session, "pid", (json_int_t)l->pid,
			 "generation", (json_int_t)l->generation, "executions", (json_int_t)l->executions,
			 "grace_ms", (json_int_t)l->grace_ms);
}

pw_err *pw_scratch_lease_decode(const json_t *j, pw_scratch_lease_info *l)
{
	memset(l, 0, sizeof *l);
	const json_t *in = json_object_get(j, "lease");
	if (!json_is_object(in))
		return pw_err_new(PW_ERR_CORRUPT, NULL, "%s", _("the scratchpad host answered a lease with something else"));
	l->session = dup_or_null(in, "session");
	l->pid = int_of(in, "pid");
	l->generation = int_of(in, "generation");
	l->executions = int_of(in, "executions");
	l->grace_ms = int_of(in, "grace_ms");
	if (!l->session || l->pid <= 1 || l->executions < 0 || l->grace_ms <= 0) {
		pw_scratch_lease_clear(l);
		return pw_err_new(PW_ERR_CORRUPT, NULL, "%s", _("the scratchpad host sent a malformed lease"));
	}
	return NULL;
}

void pw_scratch_lease_clear(pw_scratch_lease_info *l)
{
	free(l->session);
	memset(l, 0, sizeof *l);
}

/* ---------------------------------------------------------------- results */

void pw_scratch_result_add_notice(pw_scratch_result *r, const char *kind, const char *message)
{
	r->notices = xrealloc(r->notices, (r->notice_count + 1) * sizeof *r->notices);
	r->notices[r->notice_count].kind = xstrdup(kind);
	r->notices[r->notice_count].message = xstrdup(message);
	r->notice_count++;
}

static json_t *interp_encode(const pw_scratch_interp *in)
{
	if (!in)
		return json_null();
	return json_pack("{s:o, s:o, s:o, s:o, s:o}", "version", str_or_null(in->version),
			 "implementation", str_or_null(in->implementation), "build", str_or_null(in->build),
			 "executable", str_or_null(in->executable), "project_dir", str_or_null(in->project_dir));
}

json_t *pw_scratch_result_encode(const pw_scratch_result *r)
{
	json_t *notices = json_array();
	for (size_t i = 0; i < r->notice_count; i++)
		json_array_append_new(notices, json_pack("{s:s, s:s}", "kind", r->notices[i].kind,
							 "message", r->notices[i].message));
	/* notices first: a reader meets the state loss before anything else */
	json_t *j = json_object();
	json_object_set_new(j, "notices", notices);
	json_object_set_new(j, "session", str_or_null(r->session));
	json_object_set_new(j, "status", str_or_null(r->status));
	json_object_set_new(j, "execution", json_integer(r->execution));
	json_object_set_new(j, "generation", json_integer(r->generation));
	json_object_set_new(j, "value", str_or_null(r->value));
	json_object_set_new(j, "traceback", str_or_null(r->traceback));
	json_object_set_new(j, "stdout", json_string(r->out ? r->out : ""));
	json_object_set_new(j, "stderr", json_string(r->err ? r->err : ""));
	json_object_set_new(j, "truncated", json_pack("{s:I, s:I}", "stdout", (json_int_t)r->out_dropped,
						      "stderr", (json_int_t)r->err_dropped));
	json_object_set_new(j, "interpreter", interp_encode(r->interp));
	json_object_set_new(j, "duration_ms", json_integer(r->duration_ms));
	return j;
}

/* The same text as json_dumps(pw_scratch_result_encode(r), JSON_COMPACT),
 * written directly (jsontext.h): the MCP server sends one per python
 * call. NULL for what the writer does not take (an interpreter, a string
 * jansson refuses). value and traceback: their JSON text as it is, when
 * given. */
static char *dump_direct(const pw_scratch_result *r, const char *value, size_t value_len, const char *traceback,
			 size_t traceback_len, size_t *len)
{
	if (r->interp)
		return NULL;
	pw_jsontext t = { 0 };
	PW_JSONTEXT_LIT(&t, "{\"notices\":[");
	for (size_t i = 0; i < r->notice_count; i++) {
		if (i)
			PW_JSONTEXT_LIT(&t, ",");
		PW_JSONTEXT_LIT(&t, "{\"kind\":");
		pw_jsontext_str(&t, r->notices[i].kind);
		PW_JSONTEXT_LIT(&t, ",\"message\":");
		pw_jsontext_str(&t, r->notices[i].message);
		PW_JSONTEXT_LIT(&t, "}");
		/* a NULL member: json_pack fails and the notice is left out */
		t.bad |= !r->notices[i].kind || !r->notices[i].message;
	}
	PW_JSONTEXT_LIT(&t, "],\"session\":");
	pw_jsontext_str(&t, r->session);
	PW_JSONTEXT_LIT(&t, ",\"status\":");
	pw_jsontext_str(&t, r->status);
	PW_JSONTEXT_LIT(&t, ",\"execution\":");
	pw_jsontext_int(&t, r->execution);
	PW_JSONTEXT_LIT(&t, ",\"generation\":");
	pw_jsontext_int(&t, r->generation);
	PW_JSONTEXT_LIT(&t, ",\"value\":");
	if (value)
		pw_jsontext_raw(&t, value, value_len);
	else
		pw_jsontext_str(&t, r->value);
	PW_JSONTEXT_LIT(&t, ",\"traceback\":");
	if (traceback)
		pw_jsontext_raw(&t, traceback, traceback_len);
	else
		pw_jsontext_str(&t, r->traceback);
	PW_JSONTEXT_LIT(&t, ",\"stdout\":");
	pw_jsontext_str(&t, r->out ? r->out : "");
	PW_JSONTEXT_LIT(&t, ",\"stderr\":");
	pw_jsontext_str(&t, r->err ? r->err : "");
	PW_JSONTEXT_LIT(&t, ",\"truncated\":{\"stdout\":");
	pw_jsontext_int(&t, (int64_t)r->out_dropped);
	PW_JSONTEXT_LIT(&t, ",\"stderr\":");
	pw_jsontext_int(&t, (int64_t)r->err_dropped);
	PW_JSONTEXT_LIT(&t, "},\"interpreter\":null,\"duration_ms\":");
	pw_jsontext_int(&t, r->duration_ms);
	PW_JSONTEXT_LIT(&t, "}");
	return pw_jsontext_take(&t, len);
}

char *pw_scratch_result_dump_with(const pw_scratch_result *r, const char *value, size_t value_len,
				  const char *traceback, size_t traceback_len, size_t *len)
{
	return dump_direct(r, value, value_len, traceback, traceback_len, len);
}

/* jansson's own path for what the writer does not take. */
char *pw_scratch_result_dump(const pw_scratch_result *r, size_t *len)
{
	char *text = dump_direct(r, NULL, 0, NULL, 0, len);
	if (text)
		return text;
	json_t *j = pw_scratch_result_encode(r);
	text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (text && len)
		*len = strlen(text);
	return text;
}

static pw_scratch_interp *interp_decode(const json_t *j)
{
	if (!json_is_object(j))
		return NULL;
	pw_scratch_interp *in = xcalloc(1, sizeof *in);
	in->version = dup_or_null(j, "version");
	in->implementation = dup_or_null(j, "implementation");
	in->build = dup_or_null(j, "build");
	in->executable = dup_or_null(j, "executable");
	in->project_dir = dup_or_null(j, "project_dir");
	return in;
}

pw_err *pw_scratch_result_decode(const json_t *j, pw_scratch_result **out)
{
	*out = NULL;
	if (!json_is_object(j) || !json_is_string(json_object_get(j, "status")))
		return pw_err_new(PW_ERR_CORRUPT, NULL, _("the scratchpad host sent something that is not a result"));
	pw_scratch_result *r = xcalloc(1, sizeof *r);
	r->session = dup_or_null(j, "session");
	r->status = dup_or_null(j, "status");
	r->execution = int_of(j, "execution");
	r->generation = int_of(j, "generation");
	r->value = dup_or_null(j, "value");
	r->traceback = dup_or_null(j, "traceback");
	r->out = dup_or_null(j, "stdout");
	r->err = dup_or_null(j, "stderr");
	if (!r->out)
		r->out = xstrdup("");
	if (!r->err)
		r->err = xstrdup("");
	json_t *t = json_object_get(j, "truncated");
	r->out_dropped = (size_t)int_of(t, "stdout");
	r->err_dropped = (size_t)int_of(t, "stderr");
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(j, "notices"), i, n) {
		const char *kind = json_string_value(json_object_get(n, "kind"));
		const char *msg = json_string_value(json_object_get(n, "message"));
		if (kind && msg)
			pw_scratch_result_add_notice(r, kind, msg);
	}
	r->interp = interp_decode(json_object_get(j, "interpreter"));
	r->duration_ms = int_of(j, "duration_ms");
	*out = r;
	return NULL;
}

void pw_scratch_result_free(pw_scratch_result **rp)
{
	if (!rp || !*rp)
		return;
	pw_scratch_result *r = *rp;
	free(r->session);
	free(r->status);
	free(r->value);
	free(r->traceback);
	free(r->out);
	free(r->err);
	for (size_t i = 0; i < r->notice_count; i++) {
		free(r->notices[i].kind);
		free(r->notices[i].message);
	}
	free(r->notices);
	if (r->interp) {
		free(r->interp->version);
		free(r->interp->implementation);
		free(r->interp->build);
		free(r->interp->executable);
		free(r->interp->project_dir);
		free(r->interp);
	}
	free(r);
	*rp = NULL;
}

const char *pw_scratch_reply_status(const json_t *reply, bool timed_out)
{
	const char *status = json_string_value(json_object_get(reply, "status"));
	if (!status)
		return "error";
	return strcmp(status, "interrupted") == 0 && timed_out ? "timed_out" : status;
}

size_t pw_scratch_interrupt_line(char *buf, size_t n, int64_t id)
{
	int len = snprintf(buf, n, "{\"interrupt\":%lld}\n", (long long)id);
	return len > 0 && (size_t)len < n ? (size_t)len : 0;
}

bool pw_scratch_reply_unstarted(const json_t *reply)
{
	return json_is_false(json_object_get(reply, "started"));
}

const char *pw_scratch_unstarted_traceback(void)
{
	return _("KeyboardInterrupt: the interrupt came before the cell started; none of it ran\n");
}

char *pw_scratch_kill_message(int grace_ms, bool timed_out)
{
	return xasprintf(_("fresh scratchpad: the cell did not stop within %d ms of %s, so the worker was killed"),
			 grace_ms, timed_out ? _("its time budget's interrupt") : _("the interrupt"));
}

int pw_scratch_result_exit_status(const pw_scratch_result *r)
{
	if (!r->status || strcmp(r->status, "ok") == 0 || strcmp(r->status, "reset") == 0)
		return 0;
	if (strcmp(r->status, "interrupted") == 0)
		return 130;
	if (strcmp(r->status, "timed_out") == 0)
		return 4;
	return 1;
}

/* ---------------------------------------------------------------- lists */

json_t *pw_scratch_list_encode(const pw_scratch_list *l)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < l->count; i++) {
		const pw_scratch_session_info *s = &l->sessions[i];
		json_array_append_new(arr, json_pack("{s:s, s:s, s:o, s:o, s:I, s:I, s:I}", "name", s->name,
						     "state", s->state, "python", str_or_null(s->python),
						     "last_use", str_or_null(s->last_use),
						     "executions", (json_int_t)s->executions,
						     "generation", (json_int_t)s->generation, "pid", (json_int_t)s->pid));
	}
	return json_pack("{s:o, s:{s:I, s:I, s:I}}", "sessions", arr, "host", "pid", (json_int_t)l->host_pid,
			 "workers", (json_int_t)l->workers, "max_workers", (json_int_t)l->max_workers);
}

pw_err *pw_scratch_list_decode(const json_t *j, pw_scratch_list **out)
{
	*out = NULL;
	json_t *arr = json_object_get(j, "sessions");
	if (!json_is_array(arr))
		return pw_err_new(PW_ERR_CORRUPT, NULL, _("the scratchpad host sent something that is not a session list"));
	pw_scratch_list *l = xcalloc(1, sizeof *l);
	l->count = json_array_size(arr);
	l->sessions = xcalloc(l->count ? l->count : 1, sizeof *l->sessions);
	for (size_t i = 0; i < l->count; i++) {
		json_t *s = json_array_get(arr, i);
		pw_scratch_session_info *si = &l->sessions[i];
		si->name = dup_or_null(s, "name");
		si->state = dup_or_null(s, "state");
		si->python = dup_or_null(s, "python");
		si->last_use = dup_or_null(s, "last_use");
		si->executions = int_of(s, "executions");
		si->generation = int_of(s, "generation");
		si->pid = int_of(s, "pid");
		if (!si->name)
			si->name = xstrdup("?");
		if (!si->state)
			si->state = xstrdup("?");
	}
	json_t *h = json_object_get(j, "host");
	l->host_pid = int_of(h, "pid");
	l->workers = int_of(h, "workers");
	l->max_workers = int_of(h, "max_workers");
	*out = l;
	return NULL;
}

void pw_scratch_list_free(pw_scratch_list **lp)
{
	if (!lp || !*lp)
		return;
	pw_scratch_list *l = *lp;
	for (size_t i = 0; i < l->count; i++) {
		free(l->sessions[i].name);
		free(l->sessions[i].state);
		free(l->sessions[i].python);
		free(l->sessions[i].last_use);
	}
	free(l->sessions);
	free(l);
	*lp = NULL;
}

/* ---------------------------------------------------------------- errors */

json_t *pw_scratch_error_encode(const pw_err *e)
{
	json_t *inner = json_pack("{s:s, s:s}", "code", pw_err_code_name(pw_err_code(e)), "message", pw_err_message(e));
	if (pw_err_hint(e))
		json_object_set_new(inner, "hint", json_string(pw_err_hint(e)));
	return json_pack("{s:o}", "error", inner);
}

pw_err *pw_scratch_error_decode(const json_t *j)
{
	json_t *inner = json_object_get(j, "error");
	if (!json_is_object(inner))
		return NULL;
	const char *name = json_string_value(json_object_get(inner, "code"));
	const char *msg = json_string_value(json_object_get(inner, "message"));
	const char *hint = json_string_value(json_object_get(inner, "hint"));
	pw_errcode code = PW_ERR_FAILED;
	for (int c = PW_ERR_FAILED; c <= PW_ERR_NOTFOUND; c++)
		if (name && strcmp(name, pw_err_code_name((pw_errcode)c)) == 0)
			code = (pw_errcode)c;
	return pw_err_new(code, hint, "%s", msg ? msg : _("the scratchpad host failed"));
}
