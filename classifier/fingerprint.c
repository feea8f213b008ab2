/*
 * fingerprint.c - hunk, patch and report fingerprints and bug classes.
 *
 * Everything here is a pure function of its input: the same diff gives the
 * same values in slopctl import fixes, in slopctl scan and in the daemon,
 * which is what lets stored fingerprints be compared across them.
 * classifier.c hands these on as the library's classifier_diff_*() and
 * classifier_bug_*(); this file calls nothing above it. The vector path
 * where the CPU has one gives the same values as the portable one. Threading: the
 * look-up tables and the choice of path are set once (pthread_once())
 * and only read after.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ascii.h"
#include "fingerprint.h"
#include "message.h"

#define FINGERPRINT_FNV_PRIME UINT64_C(0x100000001b3)
#define FINGERPRINT_MAX_WORDS 20000
#define FINGERPRINT_WORD_MAX 64
#define FINGERPRINT_IDENT_MAX 128

/* One FNV-1a step; inlined into the loops that hash byte by byte. */
static inline uint64_t
fnv_byte(uint64_t h, unsigned char c)
{
    return (h ^ c) * FINGERPRINT_FNV_PRIME;
}

uint64_t
fingerprint_fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;

    for (size_t i = 0; i < n; i++)
        h = fnv_byte(h, s[i]);
    return h;
}

/* FNV-1a spreads short inputs poorly over the high bits; simhash needs
 * every bit to be a fair coin, so shingle hashes are mixed once more. */
static bool
is_alnum_ascii(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static uint64_t
mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    return x;
}

static bool
is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* Hash the lines [first, first + count) of r with white space dropped,
 * each behind a one-byte tag; counts the bytes hashed into *bytes. */
static uint64_t
hash_lines(uint64_t h, const struct region *r, size_t first, size_t count, char tag, size_t *bytes)
{
    size_t n = 0;

    if (r->lines == NULL || first >= r->n_lines)
        return h;
    if (count > r->n_lines - first)
        count = r->n_lines - first;
    for (size_t k = first; k < first + count; k++) {
        size_t off = r->lines[k].offset;
        const char *p, *end;

        h = fnv_byte(h, (unsigned char)tag);
        if (off >= r->len)
            continue;
        /* memchr() finds the end at once, so the loop below only hashes. */
        p = r->text + off;
        end = memchr(p, '\n', r->len - off);
        if (end == NULL)
            end = r->text + r->len;
        for (; p < end; p++) {
            if (is_space(*p))
                continue;
            h = fnv_byte(h, (unsigned char)*p);
            n++;
        }
    }
    *bytes += n;
    return h;
}

size_t
fingerprint_hunks(const struct message *m, void (*fn)(void *ctx, uint64_t fp), void *ctx)
{
    size_t calls = 0;

    for (size_t i = 0; i < m->n_hunks; i++) {
        const struct patch_hunk *hk = &m->hunks[i];
        const char *path = NULL;
        uint64_t h = FINGERPRINT_FNV_INIT;
        size_t bytes = 0;

        if (hk->file < m->n_files)
            path = m->files[hk->file].new_path ? m->files[hk->file].new_path
                                               : m->files[hk->file].old_path;
        if (path != NULL)
            h = fingerprint_fnv(h, path, strlen(path) + 1);
        h = hash_lines(h, &m->regions[REGION_REMOVED], hk->removed_first, hk->removed_count, '-',
                       &bytes);
        h = hash_lines(h, &m->regions[REGION_ADDED], hk->added_first, hk->added_count, '+', &bytes);
        if (bytes < FINGERPRINT_HUNK_MIN)
            continue;
        fn(ctx, h);
        calls++;
    }
    return calls;
}

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

uint64_t
fingerprint_patch(uint64_t *fps, size_t n)
{
    uint64_t h = FINGERPRINT_FNV_INIT;

    if (n == 0)
        return 0;
    qsort(fps, n, sizeof(*fps), cmp_u64);
    h = fingerprint_fnv(h, "patch", 5);
    for (size_t i = 0; i < n; i++)
        h = fingerprint_fnv(h, &fps[i], sizeof(fps[i]));
    return h ? h : 1;
}

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static uint64_t
hash_sorted(uint64_t h, const struct strv *sv, const char *tag)
{
    char **v;

    if (sv->n == 0)
        return h;
    v = malloc(sv->n * sizeof(*v));
    if (v == NULL) {
        /* Unsorted is still deterministic for this message; rare enough. */
        for (size_t i = 0; i < sv->n; i++)
            h = fingerprint_fnv(fingerprint_fnv(h, tag, 2), sv->v[i], strlen(sv->v[i]) + 1);
        return h;
    }
    memcpy(v, sv->v, sv->n * sizeof(*v));
    qsort(v, sv->n, sizeof(*v), cmp_str);
    for (size_t i = 0; i < sv->n; i++)
        h = fingerprint_fnv(fingerprint_fnv(h, tag, 2), v[i], strlen(v[i]) + 1);
    free(v);
    return h;
}

uint64_t
fingerprint_report_key(const struct strv *functions, const struct strv *paths, unsigned bug_classes)
{
    uint64_t h = FINGERPRINT_FNV_INIT;

    if (functions->n == 0 && paths->n == 0)
        return 0;
    h = fingerprint_fnv(h, "report", 6);
    h = hash_sorted(h, functions, "f:");
    h = hash_sorted(h, paths, "p:");
    h = fingerprint_fnv(h, &bug_classes, sizeof(bug_classes));
    return h ? h : 1;
}

/* Counters for the 64 bit positions of the shingle hashes, stored
 * sideways: bit b of planes[k] is bit k of position b's count. Adding a
 * hash is then one ripple-carry increment of all 64 counters at once,
 * instead of 64 separate additions. FINGERPRINT_MAX_WORDS fits 16 bits. */
#define FINGERPRINT_COUNT_BITS 16

_Static_assert(FINGERPRINT_MAX_WORDS < 1 << FINGERPRINT_COUNT_BITS, "a count fits its planes");

/* Adds x, whose bits each weigh 1 << k, into the counters. */
static void
bit_counts_add(uint64_t planes[FINGERPRINT_COUNT_BITS], int k, uint64_t x)
{
    for (; k < FINGERPRINT_COUNT_BITS && x != 0; k++) {
        uint64_t carry = planes[k] & x;

        planes[k] ^= x;
        x = carry;
    }
}

/* A carry-save adder: per bit, a + b + c = *low + 2 * *high. */
static inline void
csa(uint64_t *high, uint64_t *low, uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t u = a ^ b;

    *high = (a & b) | (u & c);
    *low = u ^ c;
}

/* Adds four hashes x[0..4) into the ones and twos planes[0..2) of a
 * Harley-Seal adder tree; returns their carries of weight 4. */
static inline uint64_t
add_four(uint64_t planes[FINGERPRINT_COUNT_BITS], const uint64_t *x)
{
    uint64_t twos_a, twos_b, fours;

    csa(&twos_a, &planes[0], planes[0], x[0], x[1]);
    csa(&twos_b, &planes[0], planes[0], x[2], x[3]);
    csa(&fours, &planes[1], planes[1], twos_a, twos_b);
    return fours;
}

/* The same for eight hashes, through the fours planes[2] as well;
 * returns their carries of weight 8. */
static inline uint64_t
add_eight(uint64_t planes[FINGERPRINT_COUNT_BITS], const uint64_t *x)
{
    uint64_t fours_a = add_four(planes, x), fours_b = add_four(planes, x + 4), eights;

    csa(&eights, &planes[2], planes[2], fours_a, fours_b);
    return eights;
}

/* Adds sixteen hashes: planes[0..4) are the ones, twos, fours and eights
 * of a Harley-Seal adder tree, which takes each hash in a few logical
 * operations without a branch; only the carries of weight 16, one word
 * per sixteen hashes, ripple up into the planes above. The counters are
 * the same as sixteen bit_counts_add() calls leave them. */
static void
bit_counts_add16(uint64_t planes[FINGERPRINT_COUNT_BITS], const uint64_t x[16])
{
    uint64_t eights_a = add_eight(planes, x), eights_b = add_eight(planes, x + 8), sixteens;

    csa(&sixteens, &planes[3], planes[3], eights_a, eights_b);
    bit_counts_add(planes, 4, sixteens);
}

/* The positions whose count is at least t, as a mask: the counters
 * compared with t all at once, from the top bit down, the way one
 * compares two numbers digit by digit. gt holds the positions already
 * found greater, eq those equal so far. */
static uint64_t
bit_counts_at_least(const uint64_t planes[FINGERPRINT_COUNT_BITS], uint32_t t)
{
    uint64_t gt = 0, eq = ~UINT64_C(0);

    for (int k = FINGERPRINT_COUNT_BITS; k-- > 0;) {
        if ((t >> k) & 1) {
            eq &= planes[k];
        } else {
            gt |= eq & planes[k];
            eq &= ~planes[k];
        }
    }
    return gt | eq;
}

/* Per byte: the byte lowered when it can be in a word (alnum or '_'),
 * else 0; '_' continues a word but cannot start one. One lookup replaces
 * the range tests and the lowering on every byte of the prose. */
static unsigned char word_lower[256];

static void
word_lower_init(void)
{
    for (unsigned c = 0; c < 256; c++)
        if (is_alnum_ascii((char)c) || c == '_')
            word_lower[c] = (unsigned char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
}

/* Word hashes gathered before their shingles are hashed: enough for the
 * four-way loop below to run long, small enough for the stack. */
#define FINGERPRINT_WORD_BATCH 64

/* The shingle hash of words w[0..3): fingerprint_fnv() of their 24 bytes
 * as they lie in memory, mixed. */
static uint64_t
shingle_hash(const uint64_t *w)
{
    const unsigned char *p = (const unsigned char *)w;
    uint64_t h = FINGERPRINT_FNV_INIT;

    for (size_t k = 0; k < 3 * sizeof(*w); k++)
        h = fnv_byte(h, p[k]);
    return mix64(h);
}

/* The hashes of n shingles into x, n a multiple of four: shingle b of
 * words w[b..b + 3). Each shingle is a chain of 24 dependent multiplies,
 * but different shingles' chains are not dependent: four of them hashed
 * in one loop keep the multiplier busy where one chain would leave it
 * waiting on its own last result. */
static void
shingles_portable(const uint64_t *w, size_t n, uint64_t *x)
{
    const unsigned char *p = (const unsigned char *)w;
    const size_t stride = sizeof(*w);

    for (size_t b = 0; b < n; b += 4) {
        const unsigned char *q = p + b * stride;
        uint64_t h0 = FINGERPRINT_FNV_INIT, h1 = FINGERPRINT_FNV_INIT;
        uint64_t h2 = FINGERPRINT_FNV_INIT, h3 = FINGERPRINT_FNV_INIT;

        for (size_t k = 0; k < 3 * stride; k++) {
            h0 = fnv_byte(h0, q[k]);
            h1 = fnv_byte(h1, q[k + stride]);
            h2 = fnv_byte(h2, q[k + 2 * stride]);
            h3 = fnv_byte(h3, q[k + 3 * stride]);
        }
        x[b] = mix64(h0);
        x[b + 1] = mix64(h1);
        x[b + 2] = mix64(h2);
        x[b + 3] = mix64(h3);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#define FINGERPRINT_VECTOR 1
/* Eight shingles in the eight lanes of one AVX-512 register: the scalar
 * multiplier takes one 64-bit product at a time, AVX-512DQ's vpmullq
 * eight, and hashing the shingles is most of a simhash. GCC and clang
 * both turn the vector operators below into those instructions. */
typedef uint64_t fp_u64x8 __attribute__((vector_size(64)));

/* One FNV-1a step of each lane of h by byte t of each lane of v. */
__attribute__((target("avx512f,avx512dq"), always_inline)) static inline fp_u64x8
lanes_step(fp_u64x8 h, fp_u64x8 v, unsigned t)
{
    return (h ^ ((v >> t) & 0xffu)) * FINGERPRINT_FNV_PRIME;
}

__attribute__((target("avx512f,avx512dq"), always_inline)) static inline void
lanes_finish(fp_u64x8 h, uint64_t *x)
{
    h ^= h >> 30;
    h *= UINT64_C(0xbf58476d1ce4e5b9);
    h ^= h >> 27;
    h *= UINT64_C(0x94d049bb133111eb);
    h ^= h >> 31;
    memcpy(x, &h, sizeof(h));
}

/* Eight shingles per register, four registers at once: lane b of
 * register s hashes words w[8s + b .. 8s + b + 3) a byte at a time, as
 * they lie in memory on this little-endian machine (byte t of a word is
 * bits 8t..8t + 7). Each register's chain of 24 multiplies waits on
 * itself, as a scalar one does; four keep the vector multiplier busy. */
__attribute__((target("avx512f,avx512dq"))) static void
lanes_hash32(const uint64_t *w, uint64_t *x)
{
    fp_u64x8 h0 = (fp_u64x8){0} + FINGERPRINT_FNV_INIT, h1 = h0, h2 = h0, h3 = h0;

    for (size_t k = 0; k < 3; k++) {
        fp_u64x8 v0, v1, v2, v3;

        memcpy(&v0, w + k, sizeof(v0));
        memcpy(&v1, w + 8 + k, sizeof(v1));
        memcpy(&v2, w + 16 + k, sizeof(v2));
        memcpy(&v3, w + 24 + k, sizeof(v3));
        for (unsigned t = 0; t < 64; t += 8) {
            h0 = lanes_step(h0, v0, t);
            h1 = lanes_step(h1, v1, t);
            h2 = lanes_step(h2, v2, t);
            h3 = lanes_step(h3, v3, t);
        }
    }
    lanes_finish(h0, x);
    lanes_finish(h1, x + 8);
    lanes_finish(h2, x + 16);
    lanes_finish(h3, x + 24);
}

/* The same for sixteen shingles, two registers. */
__attribute__((target("avx512f,avx512dq"))) static void
lanes_hash16(const uint64_t *w, uint64_t *x)
{
    fp_u64x8 h0 = (fp_u64x8){0} + FINGERPRINT_FNV_INIT, h1 = h0;

    for (size_t k = 0; k < 3; k++) {
        fp_u64x8 v0, v1;

        memcpy(&v0, w + k, sizeof(v0));
        memcpy(&v1, w + 8 + k, sizeof(v1));
        for (unsigned t = 0; t < 64; t += 8) {
            h0 = lanes_step(h0, v0, t);
            h1 = lanes_step(h1, v1, t);
        }
    }
    lanes_finish(h0, x);
    lanes_finish(h1, x + 8);
}

/* shingles_portable() for n shingles, n a multiple of 16. */
__attribute__((target("avx512f,avx512dq"))) static void
shingles_avx512(const uint64_t *w, size_t n, uint64_t *x)
{
    size_t b = 0;

    for (; b + 32 <= n; b += 32)
        lanes_hash32(w + b, x + b);
    for (; b < n; b += 16)
        lanes_hash16(w + b, x + b);
}
#endif

/* Chosen once (simhash_init()), for this machine. */
static void (*shingles_hash)(const uint64_t *w, size_t n, uint64_t *x) = shingles_portable;
static pthread_once_t simhash_once = PTHREAD_ONCE_INIT;

static void
simhash_init(void)
{
    word_lower_init();
#ifdef FINGERPRINT_VECTOR
    /* libgcc also checks that the kernel saves the AVX-512 registers. */
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq"))
        shingles_hash = shingles_avx512;
#endif
}

/* Counts the n shingles of words w[0 .. n + 2) (n at most
 * FINGERPRINT_WORD_BATCH): their hashes sixteen at a time, the rest one
 * by one. */
static void
shingles_count(uint64_t planes[FINGERPRINT_COUNT_BITS], const uint64_t *w, size_t n,
               void (*hash)(const uint64_t *w, size_t n, uint64_t *x))
{
    uint64_t x[FINGERPRINT_WORD_BATCH];
    size_t blocks = n / 16 * 16, j;

    hash(w, blocks, x);
    for (j = 0; j < blocks; j += 16)
        bit_counts_add16(planes, x + j);
    for (; j < n; j++)
        bit_counts_add(planes, 0, shingle_hash(w + j));
}

static uint64_t
simhash(const char *text, size_t len, void (*hash)(const uint64_t *w, size_t n, uint64_t *x))
{
    const unsigned char *t = (const unsigned char *)text;
    uint64_t planes[FINGERPRINT_COUNT_BITS] = {0};
    /* The words whose shingles are not counted yet; the last two of a
     * batch carry over as the first two of the next. */
    uint64_t w[FINGERPRINT_WORD_BATCH + 2], out = 0;
    size_t words = 0, n_w = 0, shingles, i = 0;

    while (i < len && words < FINGERPRINT_MAX_WORDS) {
        /* A word's first FINGERPRINT_WORD_MAX bytes, lowered, hashed as
         * they are read rather than copied first; the rest is skipped. */
        uint64_t h = FINGERPRINT_FNV_INIT;
        size_t k = 0, end;
        unsigned char c;

        while (i < len && (word_lower[t[i]] == 0 || t[i] == '_'))
            i++;
        end = len - i > FINGERPRINT_WORD_MAX ? i + FINGERPRINT_WORD_MAX : len;
        while (i < end && (c = word_lower[t[i]]) != 0) {
            h = fnv_byte(h, c);
            i++;
            k++;
        }
        while (i < len && word_lower[t[i]] != 0)
            i++;
        if (k == 0)
            continue;
        w[n_w++] = h;
        words++;
        if (n_w == FINGERPRINT_WORD_BATCH + 2) {
            shingles_count(planes, w, FINGERPRINT_WORD_BATCH, hash);
            w[0] = w[FINGERPRINT_WORD_BATCH];
            w[1] = w[FINGERPRINT_WORD_BATCH + 1];
            n_w = 2;
        }
    }
    if (n_w >= 3)
        shingles_count(planes, w, n_w - 2, hash);
    if (words < FINGERPRINT_SIMHASH_MIN_WORDS)
        return 0;
    shingles = words - 2;
    /* A bit is set when more shingles have it set than clear: when its
     * count is more than half of them. */
    out = bit_counts_at_least(planes, (uint32_t)(shingles / 2 + 1));
    return out ? out : 1;
}

uint64_t
fingerprint_simhash(const char *text, size_t len)
{
    pthread_once(&simhash_once, simhash_init);
    return simhash(text, len, shingles_hash);
}

uint64_t
fingerprint_simhash_portable(const char *text, size_t len)
{
    pthread_once(&simhash_once, simhash_init);
    return simhash(text, len, shingles_portable);
}

static bool
is_ident(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

struct name_set {
    char (*v)[FINGERPRINT_IDENT_MAX];
    size_t n, max;
};

static void
name_emit(struct name_set *ns, const char *p, size_t n, void (*fn)(void *ctx, const char *name),
          void *ctx)
{
    if (n == 0 || n >= FINGERPRINT_IDENT_MAX || isdigit((unsigned char)p[0]) || ns->n >= ns->max)
        return;
    for (size_t i = 0; i < ns->n; i++)
        if (strlen(ns->v[i]) == n && memcmp(ns->v[i], p, n) == 0)
            return;
    memcpy(ns->v[ns->n], p, n);
    ns->v[ns->n][n] = '\0';
    fn(ctx, ns->v[ns->n]);
    ns->n++;
}

/* "@@ -a,b +c,d @@ static int foo(struct x *y)": the name before '('. */
static void
hunk_header_name(struct name_set *ns, const char *l, size_t n,
                 void (*fn)(void *ctx, const char *name), void *ctx)
{
    const char *h = l + 3, *end = l + n, *q, *b;

    while (h + 1 < end && !(h[0] == '@' && h[1] == '@'))
        h++;
    q = memchr(h, '(', (size_t)(end - h));
    if (q == NULL)
        return;
    b = q;
    while (b > h && is_ident(b[-1]))
        b--;
    name_emit(ns, b, (size_t)(q - b), fn, ctx);
}

/* Each "name()" of a line of prose. */
static void
prose_names(struct name_set *ns, const char *l, size_t n, void (*fn)(void *ctx, const char *name),
            void *ctx)
{
    for (size_t k = 1; k + 1 < n; k++) {
        size_t b = k;

        if (l[k] != '(' || l[k + 1] != ')' || !is_ident(l[k - 1]))
            continue;
        while (b > 0 && is_ident(l[b - 1]))
            b--;
        name_emit(ns, l + b, k - b, fn, ctx);
    }
}

int
fingerprint_diff_functions(const char *text, size_t len, size_t max,
                           void (*fn)(void *ctx, const char *name), void *ctx)
{
    struct name_set ns = {.max = max};
    bool in_diff = false;
    size_t i = 0;

    if (fn == NULL || (text == NULL && len > 0))
        return -EINVAL;
    if (max == 0)
        return 0;
    ns.v = malloc(max * sizeof(*ns.v));
    if (ns.v == NULL)
        return -ENOMEM;
    while (i < len && ns.n < max) {
        const char *l = text + i, *e = memchr(l, '\n', len - i);
        size_t n = e ? (size_t)(e - l) : len - i;

        i += n + 1;
        if (n >= 11 && memcmp(l, "diff --git ", 11) == 0)
            in_diff = true;
        if (n > 3 && memcmp(l, "@@ ", 3) == 0)
            hunk_header_name(&ns, l, n, fn, ctx);
        else if (!in_diff)
            prose_names(&ns, l, n, fn, ctx);
    }
    free(ns.v);
    return (int)ns.n;
}

struct bug_pattern {
    unsigned bit;
    const char *text;
    bool word; /* must stand alone, not inside a longer word */
};

static const char *const bug_class_names[] = {
    "use-after-free", "double-free", "null-deref",       "out-of-bounds", "memory-leak",
    "race",           "deadlock",    "integer-overflow", "uninit",        "divide-by-zero",
};

static const struct bug_pattern bug_patterns[] = {
    {0, "use-after-free", false},
    {0, "use after free", false},
    {0, "uaf", true},
    {1, "double-free", false},
    {1, "double free", false},
    {2, "null-ptr-deref", false},
    {2, "null pointer deref", false},
    {2, "null-pointer-deref", false},
    {2, "null deref", false},
    {2, "null dereference", false},
    {2, "null ptr deref", false},
    {3, "out-of-bounds", false},
    {3, "out of bounds", false},
    {3, "oob", true},
    {3, "buffer overflow", false},
    {3, "overrun", false},
    {4, "memory leak", false},
    {4, "memleak", false},
    {4, "leak", true},
    {4, "leaks", true},
    {5, "data-race", false},
    {5, "data race", false},
    {5, "race", true},
    {5, "race condition", false},
    {6, "deadlock", false},
    {6, "circular locking", false},
    {7, "integer overflow", false},
    {7, "int overflow", false},
    {7, "integer underflow", false},
    {7, "wraparound", false},
    {8, "uninit-value", false},
    {8, "uninitialized", false},
    {8, "uninitialised", false},
    {9, "divide error", false},
    {9, "division by zero", false},
    {9, "divide-by-zero", false},
    {9, "div by zero", false},
};

bool
fingerprint_bug_phrase(size_t i, unsigned *bit, const char **text, bool *word)
{
    if (i >= sizeof(bug_patterns) / sizeof(bug_patterns[0]))
        return false;
    *bit = bug_patterns[i].bit;
    *text = bug_patterns[i].text;
    *word = bug_patterns[i].word;
    return true;
}

const char *
fingerprint_bug_class_name(unsigned bit)
{
    if (bit >= sizeof(bug_class_names) / sizeof(bug_class_names[0]))
        return NULL;
    return bug_class_names[bit];
}

/* Bytes of text looked at for bug classes: a class is named near the top
 * of a report or commit message, and the cost stays bounded. */
#define FINGERPRINT_CLASS_SCAN_MAX (16u << 10)

/* The slot of a pattern or a text position by its first two bytes, five
 * bits of each: letters get slots of their own, a letter's two cases the
 * same one, other bytes share them, and the full compare sorts those
 * out. So the text is looked at as it is, without a lower-case copy. */
static unsigned
pair_slot(char a, char b)
{
    return ((unsigned char)a & 31u) << 5 | ((unsigned char)b & 31u);
}

/* True when s[0..n) lowered (ASCII, as tolower() in the C locale) is
 * pat, which is lower case. */
static bool
eq_lower(const char *s, const char *pat, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];

        if ((c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c) != (unsigned char)pat[i])
            return false;
    }
    return true;
}

enum { BUG_PATTERNS = sizeof(bug_patterns) / sizeof(bug_patterns[0]) };

/* tri_bit(): a hash to BUG_TRI_BITS bits, 512 of them, one AVX-512 register. */
#define BUG_TRI_MUL 2654435761u
#define BUG_TRI_BITS 9

_Static_assert((1u << BUG_TRI_BITS) == 512, "first3 fills one AVX-512 register");

_Static_assert(BUG_PATTERNS < 256, "pattern indexes fit a byte");

/* The patterns' look-up tables, built once (bug_table_init()) and only
 * read after: three texts a message ask them. */
static struct {
    size_t plen[BUG_PATTERNS], step;
    /* Patterns by slot: head[] and next[] hold index + 1, 0 ends. */
    unsigned char head[32 * 32], next[BUG_PATTERNS];
    /* Bit a << 8 | b set for the pairs "ab", in either case, at offsets
     * 0 .. step - 1 of any pattern: exact bytes, so fewer false hits
     * than by slot, and no folding to compute per pair looked at. */
    unsigned char inside[256 * 256 / 8];
    /* One register's worth of bits (bug_classes_avx512()): bit
     * tri_bit() set for each pattern's first three bytes. */
    uint32_t first3[(1u << BUG_TRI_BITS) / 32];
    bool vector; /* the machine has AVX-512 F, BW and VL */
} bug_table;
static pthread_once_t bug_table_once = PTHREAD_ONCE_INIT;

/* c in upper case when it is a lower-case ASCII letter. */
static unsigned char
upper_ascii(unsigned char c)
{
    return c >= 'a' && c <= 'z' ? (unsigned char)(c - 'a' + 'A') : c;
}

static unsigned
pair_index(unsigned char a, unsigned char b)
{
    return (unsigned)a << 8 | b;
}

static void
pair_mark(unsigned char a, unsigned char b)
{
    unsigned at = pair_index(a, b);

    bug_table.inside[at / 8] |= (unsigned char)(1u << (at % 8));
}

/* The bit of first3 for three lowered bytes a << 16 | b << 8 | c: a
 * multiplicative hash, as few as 38 patterns leave most bits clear.
 * bug_classes_avx512() computes it in its lanes the same way. */
static unsigned
tri_bit(uint32_t x)
{
    return (x * BUG_TRI_MUL) >> (32 - BUG_TRI_BITS);
}

static void
bug_table_init(void)
{
#ifdef ASCII_VECTOR
    bug_table.vector = ascii_vector_ok();
#endif
    bug_table.step = SIZE_MAX;
    /* Every pattern has two bytes at least. */
    for (size_t p = BUG_PATTERNS; p-- > 0;) {
        unsigned slot = pair_slot(bug_patterns[p].text[0], bug_patterns[p].text[1]);

        bug_table.plen[p] = strlen(bug_patterns[p].text);
        bug_table.next[p] = bug_table.head[slot];
        bug_table.head[slot] = (unsigned char)(p + 1);
        if (bug_table.plen[p] - 1 < bug_table.step)
            bug_table.step = bug_table.plen[p] - 1;
    }
    for (size_t p = 0; p < BUG_PATTERNS; p++) {
        const unsigned char *t = (const unsigned char *)bug_patterns[p].text;
        unsigned tb = tri_bit((uint32_t)t[0] << 16 | (uint32_t)t[1] << 8 | t[2]);

        bug_table.first3[tb / 32] |= 1u << (tb % 32);
        for (size_t o = 0; o < bug_table.step; o++) {
            unsigned char a = (unsigned char)bug_patterns[p].text[o];
            unsigned char b = (unsigned char)bug_patterns[p].text[o + 1];

            pair_mark(a, b);
            pair_mark(a, upper_ascii(b));
            pair_mark(upper_ascii(a), b);
            pair_mark(upper_ascii(a), upper_ascii(b));
        }
    }
}

/* The patterns that start at text[i], i + 1 < len, added to mask. */
static unsigned
bug_classes_at(const char *text, size_t len, size_t i, unsigned mask)
{
    for (unsigned k = bug_table.head[pair_slot(text[i], text[i + 1])]; k != 0;
         k = bug_table.next[k - 1]) {
        const struct bug_pattern *bp = &bug_patterns[k - 1];
        size_t n = bug_table.plen[k - 1];

        if (((mask >> bp->bit) & 1) || n > len - i || !eq_lower(text + i, bp->text, n))
            continue;
        if (!bp->word || ((i == 0 || !isalnum((unsigned char)text[i - 1])) &&
                          (i + n >= len || !isalnum((unsigned char)text[i + n]))))
            mask |= 1u << bp->bit;
    }
    return mask;
}

static unsigned
bug_classes_portable(const char *text, size_t len)
{
    const unsigned char *inside = bug_table.inside;
    size_t step = bug_table.step;
    unsigned mask = 0;

    /* One pass that tries only the patterns that could start at a byte is
     * far cheaper than a memmem() over the text per pattern. It looks at
     * every step-th pair only (step is one less than the shortest
     * pattern): a match holds one of them within its first step bytes, so
     * a pair that is in no pattern there rules out a match starting in
     * the step bytes up to it. */
    for (size_t j = 0; j + 1 < len; j += step) {
        unsigned at = pair_index((unsigned char)text[j], (unsigned char)text[j + 1]);

        if (((inside[at / 8] >> (at % 8)) & 1) == 0)
            continue;
        for (size_t i = j + 1 > step ? j + 1 - step : 0; i <= j; i++)
            mask = bug_classes_at(text, len, i, mask);
    }
    return mask;
}

#ifdef ASCII_VECTOR
/*
 * Every pattern has three bytes at least, all in first3 (lowered as
 * eq_lower() lowers): so the positions whose three bytes miss first3,
 * sixteen asked per register without a branch, start none, and the rest
 * are tried as the portable scan tries them. Candidates are a few per
 * cent of a text's bytes, against the portable scan's pairs, which pass
 * at most places in English (the bigrams of "use", "out", "leak").
 */
__attribute__((target("avx512f,avx512bw,avx512vl"))) static unsigned
bug_classes_avx512(const char *text, size_t len)
{
    __m512i first3 = _mm512_loadu_si512((const void *)bug_table.first3);
    const __m512i k3 = _mm512_set1_epi32((int)BUG_TRI_MUL);
    unsigned mask = 0;
    size_t i = 0;

    /* Blocks of 64 positions whose three bytes are all in the text. */
    for (; len - i >= 66; i += 64) {
        uint64_t cand = 0;

        for (unsigned k = 0; k < 64; k += 16) {
            __m512i x = ascii_lanes_lower3(text + i + k);
            __m512i h = _mm512_srli_epi32(_mm512_mullo_epi32(x, k3), 32 - BUG_TRI_BITS);
            __m512i words = _mm512_permutexvar_epi32(_mm512_srli_epi32(h, 5), first3);
            __m512i bit = _mm512_srlv_epi32(words, _mm512_and_si512(h, _mm512_set1_epi32(31)));

            cand |= (uint64_t)_mm512_test_epi32_mask(bit, _mm512_set1_epi32(1)) << k;
        }
        for (; cand != 0; cand &= cand - 1)
            mask = bug_classes_at(text, len, i + (size_t)__builtin_ctzll(cand), mask);
    }
    /* The last bytes, fewer than a block's, each tried. */
    for (; i + 2 < len; i++)
        mask = bug_classes_at(text, len, i, mask);
    return mask;
}
#endif

/* vector: take the vector path where the machine has it. */
static unsigned
bug_classes(const char *text, size_t len, bool vector)
{
    if (text == NULL)
        return 0;
    pthread_once(&bug_table_once, bug_table_init);
    if (len > FINGERPRINT_CLASS_SCAN_MAX)
        len = FINGERPRINT_CLASS_SCAN_MAX;
#ifdef ASCII_VECTOR
    if (vector && bug_table.vector)
        return bug_classes_avx512(text, len);
#else
    (void)vector;
#endif
    return bug_classes_portable(text, len);
}

unsigned
fingerprint_bug_classes(const char *text, size_t len)
{
    return bug_classes(text, len, true);
}

unsigned
fingerprint_bug_classes_portable(const char *text, size_t len)
{
    return bug_classes(text, len, false);
}
