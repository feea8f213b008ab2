/* test_utf8.c - the UTF-8 helper against an encoder written from RFC 3629,
 * over every one-, two- and three-byte sequence and the four-byte ones
 * around each boundary. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "utf8.h"

/* The UTF-8 encoding of cp into out; its length. */
static size_t
encode(uint32_t cp, unsigned char out[4])
{
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xc0 | cp >> 6);
        out[1] = (unsigned char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xe0 | cp >> 12);
        out[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
        out[2] = (unsigned char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (unsigned char)(0xf0 | cp >> 18);
    out[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
    out[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
    out[3] = (unsigned char)(0x80 | (cp & 0x3f));
    return 4;
}

/* The reference: s[0..n) starts with a character when some code point
 * (not a surrogate, at most U+10FFFF) encodes to its first bytes; the
 * length of that encoding, else 0. The lead byte's bits give the only
 * candidate. */
static size_t
ref_len(const unsigned char *s, size_t n)
{
    unsigned char enc[4];
    uint32_t cp;
    size_t k;

    if (n == 0)
        return 0;
    if (s[0] < 0x80)
        return 1;
    k = (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
    if (k == 0 || n < k)
        return 0;
    cp = s[0] & (0x7fu >> k);
    for (size_t i = 1; i < k; i++)
        cp = cp << 6 | (s[i] & 0x3fu);
    if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return encode(cp, enc) == k && memcmp(enc, s, k) == 0 ? k : 0;
}

static void
test_seq_len_exhaustive(void **state)
{
    unsigned char s[4];

    (void)state;
    assert_int_equal(utf8_seq_len(s, 0), 0);
    for (uint32_t v = 0; v < 1u << 24; v++) {
        s[0] = (unsigned char)(v >> 16);
        s[1] = (unsigned char)(v >> 8);
        s[2] = (unsigned char)v;
        s[3] = 0x80;
        for (size_t n = 1; n <= 3; n++) {
            /* Only the lengths where a byte past n could matter differ. */
            if (n < 3 && (v & 0xffu) != 0x80 && (v & 0xffu) != 0)
                continue;
            assert_int_equal(utf8_seq_len(s, n), ref_len(s, n));
        }
    }
}

/* Four-byte sequences: every lead byte from F0, every second byte, and
 * the edges of the third and fourth; also cut short. */
static void
test_seq_len_four(void **state)
{
    static const unsigned char tail[] = {0x00, 0x7f, 0x80, 0xbf, 0xc0, 0xff};
    unsigned char s[4];

    (void)state;
    for (unsigned a = 0xf0; a <= 0xff; a++)
        for (unsigned b = 0; b < 256; b++)
            for (size_t c = 0; c < sizeof(tail); c++)
                for (size_t d = 0; d < sizeof(tail); d++) {
                    s[0] = (unsigned char)a;
                    s[1] = (unsigned char)b;
                    s[2] = tail[c];
                    s[3] = tail[d];
                    for (size_t n = 1; n <= 4; n++)
                        assert_int_equal(utf8_seq_len(s, n), ref_len(s, n));
                }
}

/* Every code point encodes to a sequence the helper takes whole. */
static void
test_every_code_point(void **state)
{
    unsigned char enc[4];

    (void)state;
    for (uint32_t cp = 0; cp <= 0x10ffff; cp++) {
        size_t k = encode(cp, enc);

        assert_int_equal(utf8_seq_len(enc, k), cp >= 0xd800 && cp <= 0xdfff ? 0 : k);
        if (k > 1)
            assert_int_equal(utf8_seq_len(enc, k - 1), 0);
    }
}

static void
test_valid_prefix(void **state)
{
    static const struct {
        const char *s;
        size_t n, want;
    } cases[] = {
        {"", 0, 0},
        {"plain", 5, 5},
        {"a\0b", 3, 3},              /* NUL is a character */
        {"caf\xc3\xa9", 5, 5},       /* é */
        {"caf\xc3\xa9", 4, 3},       /* é cut short */
        {"ab\xc0\xafz", 5, 2},       /* overlong '/' */
        {"\xed\xa0\x80x", 4, 0},     /* a surrogate */
        {"\xf0\x9f\x98\x80!", 5, 5}, /* U+1F600 */
        {"\xf4\x90\x80\x80", 4, 0},  /* past U+10FFFF */
        {"x\x80y", 3, 1},            /* a lone continuation byte */
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_int_equal(utf8_valid_prefix(cases[i].s, cases[i].n), cases[i].want);
}

static void
test_cut(void **state)
{
    static const struct {
        const char *s;
        size_t max, want;
    } cases[] = {
        {"abc", 5, 3},
        {"abc", 3, 3},
        {"abc", 2, 2},
        {"abc", 0, 0},
        {"a\xc3\xa9z", 2, 1},               /* would split é */
        {"a\xc3\xa9z", 3, 3},               /* é whole */
        {"\xe2\x82\xac\xe2\x82\xac", 5, 3}, /* € € */
        {"\xe2\x82\xac\xe2\x82\xac", 1, 0},
        {"\xf0\x9f\x98\x80", 3, 0},
        {"x\xffy", 1, 1}, /* an invalid byte is cut like any other */
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_int_equal(utf8_cut(cases[i].s, strlen(cases[i].s), cases[i].max), cases[i].want);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seq_len_exhaustive),
        cmocka_unit_test(test_seq_len_four),
        cmocka_unit_test(test_every_code_point),
        cmocka_unit_test(test_valid_prefix),
        cmocka_unit_test(test_cut),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
