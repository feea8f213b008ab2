/*
 * report_html.c - the report's HTML document. The style sheet and the
 * sorting script are constants of this file; their CSP hashes are
 * computed from the very bytes written, so editing either cannot leave a
 * stale hash behind.
 */
#include <errno.h>
#include <glib.h>
#include <stdbool.h>
#include <string.h>

#include "report_escape.h"
#include "report_html.h"
#include "report_svg.h"

/* Fields as they are written: tighter than REPORT_FIELD_MAX where a table
 * cell has little room. */
#define HTML_FROM_MAX 120

static const char style_sheet[] =
    "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1240px;"
    "color:#1b1f24;background:#fff;padding:0 16px}"
    "h1{font-size:22px;margin:0 0 4px}"
    "h2{font-size:18px;margin:28px 0 10px;border-bottom:1px solid #d8dee4}"
    "table{border-collapse:collapse}"
    ".lead{color:#57606a;margin:0}"
    ".counts{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}"
    ".counts table{border:1px solid #d8dee4;border-radius:6px}"
    ".counts th,.counts td{padding:3px 10px;text-align:left}"
    ".counts caption{font-weight:600;text-align:left;padding:4px 0}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}"
    ".charts{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}"
    "figure{margin:0;border:1px solid #d8dee4;border-radius:6px;padding:8px;"
    "flex:1 1 560px;max-width:620px}"
    "figcaption{font-weight:600;margin-bottom:4px}"
    "svg.chart{width:100%;height:auto}"
    "svg text{font:11px sans-serif;fill:#24292f}"
    "svg .yl,svg .bl{text-anchor:end}svg .xl{text-anchor:middle}"
    "svg .grid{stroke:#eaeef2}"
    "svg .cap{fill:#57606a}"
    "svg .axis{stroke:#8c959f}"
    "svg .thr{stroke-width:2;stroke-dasharray:5 3}"
    "svg .thl{font-weight:600}svg .end{text-anchor:end}"
    "rect.a-none,i.a-none{fill:#8c959f;background:#8c959f}"
    "rect.a-tag,i.a-tag{fill:#d4a72c;background:#d4a72c}"
    "rect.a-reply,i.a-reply{fill:#218bff;background:#218bff}"
    "rect.a-quarantine,i.a-quarantine{fill:#e16f24;background:#e16f24}"
    "rect.a-reject,i.a-reject{fill:#cf222e;background:#cf222e}"
    "line.a-tag{stroke:#d4a72c}line.a-reply{stroke:#218bff}"
    "line.a-quarantine{stroke:#e16f24}line.a-reject{stroke:#cf222e}"
    ".legend{margin:8px 0}.legend span{margin-right:14px}"
    ".legend i{display:inline-block;width:10px;height:10px;margin-right:4px}"
    ".badge{padding:1px 7px;border-radius:9px;font-size:12px;white-space:nowrap}"
    ".badge.a-none{background:#eaeef2}.badge.a-tag{background:#fff8c5}"
    ".badge.a-reply{background:#ddf4ff}.badge.a-quarantine{background:#fff1e5}"
    ".badge.a-reject{background:#ffebe9}"
    "#msgs{width:100%;table-layout:fixed}"
    "#msgs th,#msgs td{border-bottom:1px solid #eaeef2;padding:5px 6px;vertical-align:top;"
    "text-align:left;overflow-wrap:anywhere}"
    "#msgs th{background:#f6f8fa;position:sticky;top:0}"
    "#msgs td.num{text-align:right}"
    "#msgs col.c-score{width:80px}#msgs col.c-action{width:96px}#msgs col.c-kind{width:64px}"
    "#msgs col.c-day{width:96px}#msgs col.c-from{width:200px}"
    ".subj{font-weight:600}"
    ".meta{color:#57606a;font-size:12px}"
    "details ul{margin:4px 0;padding-left:18px}"
    "pre.ev{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;margin:2px 0 6px;"
    "padding:4px 6px;font:12px/1.35 ui-monospace,monospace}"
    "th button{font:inherit;font-weight:600;border:0;background:none;cursor:pointer;padding:0;"
    "white-space:nowrap}"
    "th[aria-sort=descending] button::after{content:\" \\25BC\"}"
    "th[aria-sort=ascending] button::after{content:\" \\25B2\"}"
    ".note{color:#9a6700}";

/*
 * Sort the table by a column (score or day) on a click on its header, and
 * on load when the address ends in #sort=score-asc (or -desc, day-...).
 * Ties keep the scan order. data-script="ran" on <html> tells that the
 * policy let it run.
 */
static const char sort_script[] =
    "(function () {\n"
    "  'use strict';\n"
    "  var table = document.getElementById('msgs');\n"
    "  if (!table) return;\n"
    "  var body = table.tBodies[0];\n"
    "  function sortBy(key, dir) {\n"
    "    var rows = Array.prototype.slice.call(body.rows);\n"
    "    rows.sort(function (a, b) {\n"
    "      var x = a.getAttribute('data-' + key), y = b.getAttribute('data-' + key), c;\n"
    "      if (key === 'score') c = parseFloat(x) - parseFloat(y);\n"
    "      else c = x < y ? -1 : x > y ? 1 : 0;\n"
    "      if (c !== 0) return dir === 'asc' ? c : -c;\n"
    "      return parseInt(a.getAttribute('data-seq'), 10) -\n"
    "        parseInt(b.getAttribute('data-seq'), 10);\n"
    "    });\n"
    "    rows.forEach(function (r) { body.appendChild(r); });\n"
    "    Array.prototype.forEach.call(table.querySelectorAll('th[data-key]'), function (th) {\n"
    "      th.setAttribute('aria-sort', th.getAttribute('data-key') !== key ? 'none' :\n"
    "        dir === 'asc' ? 'ascending' : 'descending');\n"
    "    });\n"
    "    table.setAttribute('data-sorted', key + '-' + dir);\n"
    "  }\n"
    "  Array.prototype.forEach.call(table.querySelectorAll('th[data-key]'), function (th) {\n"
    "    var b = document.createElement('button');\n"
    "    b.type = 'button';\n"
    "    b.textContent = th.textContent;\n"
    "    th.textContent = '';\n"
    "    th.appendChild(b);\n"
    "    b.addEventListener('click', function () {\n"
    "      sortBy(th.getAttribute('data-key'),\n"
    "        th.getAttribute('aria-sort') === 'descending' ? 'asc' : 'desc');\n"
    "    });\n"
    "  });\n"
    "  var m = /^#sort=(score|day)-(asc|desc)$/.exec(window.location.hash);\n"
    "  if (m) sortBy(m[1], m[2]);\n"
    "  document.documentElement.setAttribute('data-script', 'ran');\n"
    "})();\n";

/* "sha256-BASE64" of s for a CSP source list; free with g_free(). */
static char *
csp_hash(const char *s)
{
    GChecksum *ck = g_checksum_new(G_CHECKSUM_SHA256);
    guint8 digest[32];
    gsize n = sizeof(digest);
    char *b64, *ret;

    if (ck == NULL)
        return NULL;
    g_checksum_update(ck, (const guchar *)s, (gssize)strlen(s));
    g_checksum_get_digest(ck, digest, &n);
    g_checksum_free(ck);
    b64 = g_base64_encode(digest, n);
    ret = g_strconcat("'sha256-", b64, "'", NULL);
    g_free(b64);
    return ret;
}

static void
head_write(FILE *f, const char *style_src, const char *script_src)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n", f);
    fprintf(f,
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "style-src %s; script-src %s; img-src data:; base-uri 'none'; "
            "form-action 'none'\">\n",
            style_src, script_src);
    fputs("<meta name=\"referrer\" content=\"no-referrer\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>slop-milter report</title>\n<style>",
          f);
    fputs(style_sheet, f);
    fputs("</style>\n</head>\n", f);
}

static void
count_row(FILE *f, const char *id, const char *label, unsigned long n)
{
    fprintf(f, "<tr><th scope=\"row\">%s</th><td class=\"num\" id=\"%s\">%lu</td></tr>\n", label,
            id, n);
}

static void
summary_write(FILE *f, const struct report *rep)
{
    char id[48];

    fputs("<section id=\"summary\">\n<h2>Summary</h2>\n<div class=\"counts\">\n", f);
    fputs("<table><caption>Messages</caption>\n", f);
    count_row(f, "count-messages", "scanned", rep->messages);
    count_row(f, "count-errors", "not scanned", rep->errors);
    count_row(f, "count-undated", "without a Date:", rep->undated);
    fputs("</table>\n<table><caption>Actions</caption>\n", f);
    for (int a = 0; a < CLASSIFIER_ACTION__COUNT; a++) {
        const char *name = classifier_action_name((enum classifier_action)a);

        snprintf(id, sizeof(id), "count-action-%s", name);
        count_row(f, id, name, rep->by_action[a]);
    }
    fputs("</table>\n<table><caption>Kinds</caption>\n", f);
    for (int k = 0; k < REPORT_KINDS; k++) {
        const char *name = classifier_kind_name((enum classifier_kind)k);

        snprintf(id, sizeof(id), "count-kind-%s", name);
        count_row(f, id, name, rep->by_kind[k]);
    }
    fputs("</table>\n</div>\n</section>\n", f);
}

static int
charts_write(FILE *f, const struct report *rep)
{
    int r;

    fputs("<section id=\"charts\">\n<h2>Charts</h2>\n<p class=\"legend\">", f);
    for (int a = 0; a < CLASSIFIER_ACTION__COUNT; a++)
        fprintf(f, "<span><i class=\"a-%s\"></i>%s</span>",
                classifier_action_name((enum classifier_action)a),
                classifier_action_name((enum classifier_action)a));
    fputs("</p>\n<div class=\"charts\">\n", f);
    fputs("<figure><figcaption>Score distribution and thresholds</figcaption>\n", f);
    if ((r = report_svg_scores(f, rep)) < 0)
        return r;
    fputs("</figure>\n<figure><figcaption>Findings by rule</figcaption>\n", f);
    if ((r = report_svg_rules(f, rep)) < 0)
        return r;
    fputs("</figure>\n<figure><figcaption>Actions over time</figcaption>\n", f);
    if ((r = report_svg_time(f, rep)) < 0)
        return r;
    fputs("</figure>\n<figure><figcaption>Top senders</figcaption>\n", f);
    if ((r = report_svg_senders(f, rep)) < 0)
        return r;
    fputs("</figure>\n</div>\n</section>\n", f);
    return 0;
}

/* A link only to the documents under the report's doc base, and only
 * when that base is http(s); anything else is shown as text. */
static void
doc_write(FILE *f, const char *doc, const char *base)
{
    size_t n = strlen(base);
    bool web = strncmp(base, "https://", 8) == 0 || strncmp(base, "http://", 7) == 0;

    if (web && strncmp(doc, base, n) == 0) {
        fputs(" <a rel=\"noopener noreferrer\" href=\"", f);
        report_escape(f, doc, REPORT_FIELD_MAX, false);
        fputs("\">documentation</a>", f);
        return;
    }
    fputs(" <span class=\"meta\">doc: ", f);
    report_escape(f, doc, REPORT_FIELD_MAX, false);
    fputs("</span>", f);
}

static void
hits_write(FILE *f, const struct report_row *row, const char *doc_base)
{
    char num[32];

    if (row->n_hits == 0)
        return;
    fprintf(f, "<details%s><summary>%zu finding%s</summary><ul>\n",
            row->action != CLASSIFIER_ACTION_NONE ? " open" : "", row->n_hits + row->hits_dropped,
            row->n_hits + row->hits_dropped == 1 ? "" : "s");
    for (size_t i = 0; i < row->n_hits; i++) {
        const struct report_hit *h = &row->hits[i];

        fprintf(f, "<li><code>");
        report_escape(f, h->rule, REPORT_FIELD_MAX, false);
        fprintf(f, "</code> %s ", output_score(h->score, num, sizeof(num)));
        report_escape(f, h->description, REPORT_FIELD_MAX, false);
        if (h->doc != NULL)
            doc_write(f, h->doc, doc_base);
        if (h->evidence != NULL) {
            fputs("<pre class=\"ev\">", f);
            report_escape(f, h->evidence, REPORT_EVIDENCE_MAX, true);
            fputs("</pre>", f);
        }
        fputs("</li>\n", f);
    }
    if (row->hits_dropped > 0)
        fprintf(f, "<li class=\"note\">%zu more not kept</li>\n", row->hits_dropped);
    fputs("</ul></details>", f);
}

static void
row_write(FILE *f, const struct report_row *row, const char *doc_base)
{
    const char *action = classifier_action_name(row->action);
    char num[32];

    output_score(row->score, num, sizeof(num));
    fprintf(f, "<tr data-score=\"%s\" data-day=\"%s\" data-seq=\"%zu\" data-action=\"%s\">", num,
            row->day, row->seq, action);
    fprintf(f, "<td class=\"num\">%s</td><td><span class=\"badge a-%s\">%s</span></td>", num,
            action, action);
    fprintf(f, "<td>%s</td><td>%s</td><td>", classifier_kind_name(row->kind), row->day);
    report_escape(f, row->from, HTML_FROM_MAX, false);
    fputs("</td>\n<td><div class=\"subj\">", f);
    if (row->subject != NULL)
        report_escape(f, row->subject, REPORT_FIELD_MAX, false);
    else
        fputs("(no subject)", f);
    fputs("</div><div class=\"meta\">", f);
    report_escape(f, row->where, REPORT_FIELD_MAX + 32, false);
    if (row->message_id != NULL) {
        fputs(" &lt;", f);
        report_escape(f, row->message_id, REPORT_FIELD_MAX, false);
        fputs("&gt;", f);
    }
    if (row->disclosure)
        fputs(" &middot; AI tools disclosed", f);
    if (row->truncated)
        fputs(" &middot; cut by a limit", f);
    fputs("</div>", f);
    hits_write(f, row, doc_base);
    fputs("</td></tr>\n", f);
}

static void
table_write(FILE *f, const struct report *rep)
{
    fputs("<section id=\"messages\">\n<h2>Messages</h2>\n", f);
    fprintf(f, "<p class=\"lead\">%zu listed, highest score first", rep->n_rows);
    if (rep->rows_dropped > 0)
        fprintf(f, "; <span class=\"note\">%lu more not listed (the table is capped)</span>",
                rep->rows_dropped);
    fputs(". Findings of messages with an action are open.</p>\n", f);
    fputs("<table id=\"msgs\">\n<colgroup><col class=\"c-score\"><col class=\"c-action\">"
          "<col class=\"c-kind\"><col class=\"c-day\"><col class=\"c-from\"><col></colgroup>\n"
          "<thead><tr><th data-key=\"score\" aria-sort=\"descending\">Score</th>"
          "<th>Action</th><th>Kind</th><th data-key=\"day\" aria-sort=\"none\">Date</th>"
          "<th>From</th><th>Subject, source and findings</th></tr></thead>\n<tbody>\n",
          f);
    for (size_t i = 0; i < rep->n_rows; i++)
        row_write(f, &rep->rows[i], rep->doc_base);
    fputs("</tbody>\n</table>\n</section>\n", f);
}

int
report_html_write(FILE *f, const struct report *rep)
{
    char *style_src = csp_hash(style_sheet), *script_src = csp_hash(sort_script);
    int r = -ENOMEM;

    if (style_src == NULL || script_src == NULL)
        goto out;
    head_write(f, style_src, script_src);
    fprintf(f,
            "<body>\n<header><h1>slop-milter report</h1>\n<p class=\"lead\">%lu message%s "
            "scanned by slopctl %s. Every text from mail is shown as text.</p></header>\n",
            rep->messages, rep->messages == 1 ? "" : "s", CLASSIFIER_VERSION);
    summary_write(f, rep);
    r = charts_write(f, rep);
    if (r < 0)
        goto out;
    table_write(f, rep);
    fputs("<script>", f);
    fputs(sort_script, f);
    fputs("</script>\n</body>\n</html>\n", f);
    r = ferror(f) ? (errno > 0 ? -errno : -EIO) : 0;
out:
    g_free(style_src);
    g_free(script_src);
    return r;
}
