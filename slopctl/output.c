/*
 * output.c - text and JSON renderings of a struct classifier_result.
 *
 * Everything that came from mail (subject, evidence, message id, even file
 * names) passes through one writer that checks UTF-8: invalid bytes become
 * U+FFFD, so JSON lines always parse and text lines never carry raw
 * control characters to a terminal. Borrowed pointers only; no state.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "output.h"
#include "utf8.h"

static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */

/* JSON's escape for the ASCII byte c. */
static void
escape_json(FILE *f, unsigned char c)
{
    switch (c) {
    case '"':
        fputs("\\\"", f);
        break;
    case '\\':
        fputs("\\\\", f);
        break;
    case '\b':
        fputs("\\b", f);
        break;
    case '\f':
        fputs("\\f", f);
        break;
    case '\n':
        fputs("\\n", f);
        break;
    case '\r':
        fputs("\\r", f);
        break;
    case '\t':
        fputs("\\t", f);
        break;
    default:
        fprintf(f, "\\u%04x", c);
        break;
    }
}

/* A byte that cannot stand as it is: U+FFFD for one that starts no
 * valid (or, on a terminal, no printable) UTF-8 character, else its
 * escape. */
static void
escape_byte(FILE *f, unsigned char c, bool json)
{
    if (c >= 0x80)
        fputs(replacement, f);
    else if (json)
        escape_json(f, c);
    else if (c == '\t')
        putc(' ', f);
    else if (c == '\n')
        fputs("\\n", f);
    else
        fprintf(f, "\\x%02x", c);
}

/*
 * Write s escaped for JSON (json) or for a terminal (!json). The strings
 * are NUL-terminated: a character is looked for in the bytes up to the
 * NUL, never past it.
 */
static void
write_escaped(FILE *f, const char *s, bool json)
{
    const unsigned char *p = (const unsigned char *)s, *run = p;
    size_t n;

    for (;;) {
        unsigned char c = *p;

        if (c >= 0x20 && c < 0x7F && (!json || (c != '"' && c != '\\'))) {
            p++;
            continue;
        }
        if (c >= 0x80) {
            n = utf8_seq_len(p, strnlen((const char *)p, 4));
            /* C1 controls (U+0080..U+009F) act on some terminals. */
            if (n == 2 && c == 0xC2 && p[1] < 0xA0 && !json)
                n = 0;
            if (n > 0) {
                p += n;
                continue;
            }
        }
        fwrite(run, 1, (size_t)(p - run), f);
        if (c == '\0')
            return;
        escape_byte(f, c, json);
        p++;
        run = p;
    }
}

void
output_json_string(FILE *f, const char *s)
{
    if (s == NULL) {
        fputs("null", f);
        return;
    }
    putc('"', f);
    write_escaped(f, s, true);
    putc('"', f);
}

/*
 * printf's "%.1f" rounds exactly, but its decimal point follows
 * LC_NUMERIC; keep the digits it chose and put a '.' between them.
 */
const char *
output_score(double score, char *buf, size_t size)
{
    char tmp[64];
    const char *p;
    size_t o = 0;

    if (size < 32)
        return "";
    if (!isfinite(score) || score >= 1e18 || score <= -1e18) {
        snprintf(buf, size, "0.0");
        return buf;
    }
    snprintf(tmp, sizeof(tmp), "%.1f", score);
    p = tmp;
    if (*p == '-')
        buf[o++] = *p++;
    while (*p >= '0' && *p <= '9')
        buf[o++] = *p++;
    while (*p != '\0' && !(*p >= '0' && *p <= '9'))
        p++;
    buf[o++] = '.';
    buf[o++] = *p >= '0' && *p <= '9' ? *p : '0';
    buf[o] = '\0';
    if (strcmp(buf, "-0.0") == 0)
        memmove(buf, buf + 1, 4);
    return buf;
}

static void
text_location(FILE *f, const struct output_source *src)
{
    write_escaped(f, src->file, false);
    if (src->in_mbox || src->index > 0)
        fprintf(f, "#%zu", src->index);
}

static void
result_json(FILE *f, const struct output_source *src, const struct classifier_result *r)
{
    char num[32];
    size_t i;

    fputs("{\"file\":", f);
    output_json_string(f, src->file);
    fprintf(f, ",\"index\":%zu,\"message_id\":", src->index);
    output_json_string(f, r->message_id);
    fputs(",\"subject\":", f);
    output_json_string(f, r->subject);
    fputs(",\"kind\":", f);
    output_json_string(f, classifier_kind_name(r->kind));
    fprintf(f, ",\"score\":%s,\"action\":", output_score(r->score, num, sizeof(num)));
    output_json_string(f, classifier_action_name(r->action));
    fprintf(f, ",\"disclosure\":%s,\"truncated\":%s,\"hits\":[", r->disclosure ? "true" : "false",
            r->truncated ? "true" : "false");
    for (i = 0; i < r->n_hits; i++) {
        const struct classifier_hit *h = &r->hits[i];

        fputs(i > 0 ? ",{\"rule\":" : "{\"rule\":", f);
        output_json_string(f, h->rule);
        fprintf(f, ",\"score\":%s,\"description\":", output_score(h->score, num, sizeof(num)));
        output_json_string(f, h->description);
        fputs(",\"evidence\":", f);
        output_json_string(f, h->evidence);
        fputs(",\"doc\":", f);
        output_json_string(f, h->doc);
        putc('}', f);
    }
    fputs("]}\n", f);
}

static void
result_text(FILE *f, const struct output_source *src, const struct classifier_result *r)
{
    char num[32];
    size_t i;

    text_location(f, src);
    fprintf(f, ": %s score=%s kind=%s", classifier_action_name(r->action),
            output_score(r->score, num, sizeof(num)), classifier_kind_name(r->kind));
    if (r->message_id != NULL) {
        fputs(" message-id=<", f);
        write_escaped(f, r->message_id, false);
        putc('>', f);
    }
    if (r->disclosure)
        fputs(" disclosure=yes", f);
    if (r->truncated)
        fputs(" truncated=yes", f);
    putc('\n', f);
    if (r->subject != NULL) {
        fputs("  subject: ", f);
        write_escaped(f, r->subject, false);
        putc('\n', f);
    }
    for (i = 0; i < r->n_hits; i++) {
        const struct classifier_hit *h = &r->hits[i];

        fprintf(f, "    %s ", output_score(h->score, num, sizeof(num)));
        write_escaped(f, h->rule != NULL ? h->rule : "?", false);
        if (h->description != NULL) {
            fputs("  ", f);
            write_escaped(f, h->description, false);
        }
        putc('\n', f);
        if (h->evidence != NULL) {
            fputs("        evidence: ", f);
            write_escaped(f, h->evidence, false);
            putc('\n', f);
        }
        if (h->doc != NULL) {
            fputs("        doc: ", f);
            write_escaped(f, h->doc, false);
            putc('\n', f);
        }
    }
}

/* stdio keeps the failing write's errno; report that rather than a bare EIO. */
static int
stream_status(FILE *f)
{
    if (!ferror(f))
        return 0;
    return errno > 0 ? -errno : -EIO;
}

int
output_result(const struct output *o, const struct output_source *src,
              const struct classifier_result *r)
{
    if (o->only_actions && r->action == CLASSIFIER_ACTION_NONE)
        return 0;
    if (o->format == OUTPUT_JSON)
        result_json(o->out, src, r);
    else
        result_text(o->out, src, r);
    return stream_status(o->out);
}

int
output_error(const struct output *o, const struct output_source *src, const char *reason)
{
    fputs("slopctl: ", o->err);
    text_location(o->err, src);
    fputs(": ", o->err);
    write_escaped(o->err, reason, false);
    putc('\n', o->err);
    if (o->format != OUTPUT_JSON)
        return 0;
    fputs("{\"file\":", o->out);
    output_json_string(o->out, src->file);
    fprintf(o->out, ",\"index\":%zu,\"error\":", src->index);
    output_json_string(o->out, reason);
    fputs("}\n", o->out);
    return stream_status(o->out);
}

void
output_diag(void *ctx, const struct classifier_diag *d)
{
    struct output_diag_sink *sink = ctx;

    sink->count++;
    if (d->line > 0)
        fprintf(sink->f, "%s:%u: %s\n", d->file, d->line, d->reason);
    else
        fprintf(sink->f, "%s: %s\n", d->file, d->reason);
}
