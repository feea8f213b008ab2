/* test_mime_html.c - the text of HTML parts: markup out, block tags as
 * line breaks, character references decoded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mime_html.h"
#include "textbuf.h"

struct html_case {
    const char *html, *text;
};

static void
check_cases(const struct html_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct textbuf out = {0};

        print_message("case %zu: %s\n", i, cases[i].html);
        assert_int_equal(mime_html_to_text(cases[i].html, strlen(cases[i].html), &out), 0);
        assert_string_equal(textbuf_str(&out), cases[i].text);
        textbuf_release(&out);
    }
}

/* Numeric references in both bases, at the edges of what a document may
 * hold; malformed ones stay as written. */
static void
test_numeric_references(void **state)
{
    static const struct html_case cases[] = {
        {"&#60;b&#62;", "<b>"},
        {"&#x3c;&#X3C;&#x3C;", "<<<"},
        {"caf&#233; &#xe9;", "caf\xc3\xa9 \xc3\xa9"},
        {"&#x20AC;", "\xe2\x82\xac"},
        {"&#x1F600;", "\xf0\x9f\x98\x80"},
        {"&#0;", "\xef\xbf\xbd"},
        {"&#xD800;", "\xef\xbf\xbd"},
        {"&#x110000;", "\xef\xbf\xbd"},
        {"&#60", "&#60"},
        {"&#;", "&#;"},
        {"&#x;", "&#x;"},
        {"&#99999999999999999999;", "&#99999999999999999999;"},
    };

    (void)state;
    check_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

/* Named references mail writers emit; unknown ones stay as written, and
 * invisible characters are left out so a split word stays whole. */
static void
test_named_references(void **state)
{
    static const struct html_case cases[] = {
        {"a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos;", "a & b <c> \"d\" 'e'"},
        {"x&nbsp;y", "x y"},
        {"&hellip;&mdash;&rsquo;", "\xe2\x80\xa6\xe2\x80\x94\xe2\x80\x99"},
        {"mu&shy;tex_un&zwsp;lock", "mutex_unlock"},
        {"&unknown; &amp &AMP;", "&unknown; &amp &AMP;"},
        {"tail &", "tail &"},
    };

    (void)state;
    check_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

/* Comments, declarations and raw text never reach the output, whatever
 * they hold; quoted attribute values may hold '>'. */
static void
test_hidden_markup(void **state)
{
    static const struct html_case cases[] = {
        {"a<!-- <p>hidden</p> -> --> b", "a b"},
        {"<!DOCTYPE html><?xml version=\"1.0\"?>x", "x"},
        {"a<!-- never closed", "a"},
        {"<a title=\"1 > 0\" href='x>y'>link</a>", "link"},
        {"<script>if (a < b && c > d) x();</script>after", "after"},
        {"<SCRIPT>x</p>y</Script >z", "z"},
        {"<style>p > a { color: red }</style>s", "s"},
        {"<script>never closed", ""},
        {"<b", ""},
    };

    (void)state;
    check_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

/* Block tags break lines; inline ones do not; a '<' that starts no tag
 * is text. */
static void
test_layout(void **state)
{
    static const struct html_case cases[] = {
        {"<p>one</p><p>two", "\none\n\ntwo"},
        {"a<br/>b<BR>c", "a\nb\nc"},
        {"<ul><li>x</li><li>y</li></ul>", "\n\nx\n\ny\n\n"},
        {"<b>bold</b> <i>it</i> <span class=\"s\">span</span>", "bold it span"},
        {"<h1>T</h1><section>S</section>", "\nT\n\nS\n"},
        {"if a < b and b <= c", "if a < b and b <= c"},
        {"x <3 y", "x <3 y"},
        {"<verylongtagnamethatgoesonandon>t", "t"},
    };

    (void)state;
    check_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numeric_references),
        cmocka_unit_test(test_named_references),
        cmocka_unit_test(test_hidden_markup),
        cmocka_unit_test(test_layout),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
