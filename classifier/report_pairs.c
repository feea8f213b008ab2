/*
 * report_pairs.c - find any of a few needles in a line in one pass, by a
 * filter on pairs of bytes (struct report_pairs, report_parser.h).
 *
 * Threading: a filter is built once and only read after.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "report_parser.h"

static unsigned
pair_index(unsigned char a, unsigned char b)
{
    return (unsigned)a << 8 | b;
}

static bool
pair_filter_has(const struct report_pairs *f, unsigned char a, unsigned char b)
{
    unsigned k = pair_index(a, b);

    return (f->bits[k >> 6] & ((uint64_t)1 << (k & 63))) != 0;
}

/* needles[0..n), 0 < n <= REPORT_PAIRS_MAX, each at least two bytes, must
 * outlive f. */
void
report_pairs_init(struct report_pairs *f, const struct needle *needles, size_t n)
{
    size_t m = 0, shortest = SIZE_MAX;

    memset(f, 0, sizeof(*f));
    for (size_t k = 0; k < n; k++)
        shortest = needles[k].n < shortest ? needles[k].n : shortest;
    f->step = shortest - 1;
    for (size_t k = 0; k < n; k++) {
        for (size_t o = 0; o < f->step; o++) {
            unsigned b =
                pair_index((unsigned char)needles[k].s[o], (unsigned char)needles[k].s[o + 1]);

            f->bits[b >> 6] |= (uint64_t)1 << (b & 63);
        }
    }
    for (unsigned c = 0; c < 256; c++) {
        f->first[c] = (uint8_t)m;
        for (size_t k = 0; k < n; k++) {
            if ((unsigned char)needles[k].s[0] == c) {
                f->v[m++] = &needles[k];
                f->count[c]++;
            }
        }
    }
}

/* Whether a needle of f starts at s[i], s being len bytes long. */
static bool
needle_at(const char *s, size_t len, size_t i, const struct report_pairs *f)
{
    unsigned char c = (unsigned char)s[i];

    for (size_t k = f->first[c]; k < (size_t)f->first[c] + f->count[c]; k++) {
        const struct needle *e = f->v[k];

        /* The last byte before the rest rules out most near misses. */
        if (e->n <= len - i && e->s[e->n - 1] == s[i + e->n - 1] && memcmp(s + i, e->s, e->n) == 0)
            return true;
    }
    return false;
}

/* Whether any needle of f occurs in s[0..len): one pass over s instead
 * of one search per needle, since this runs on every line of a message. */
bool
report_pairs_find(const char *s, size_t len, const struct report_pairs *f)
{
    for (size_t j = 0; j + 1 < len; j += f->step) {
        if (!pair_filter_has(f, (unsigned char)s[j], (unsigned char)s[j + 1]))
            continue;
        for (size_t i = j + 1 > f->step ? j + 1 - f->step : 0; i <= j; i++)
            if (needle_at(s, len, i, f))
                return true;
    }
    return false;
}
