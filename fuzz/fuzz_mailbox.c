/*
 * fuzz_mailbox.c - libFuzzer target: bytes -> slopctl's mbox/Maildir reader.
 *
 * mailbox.c is included whole so that its mbox splitter can be driven
 * directly on an exact-size heap copy: through mailbox_walk() the bytes
 * come from an mmap() whose page tail reads as zeros, which would hide an
 * overread from ASan. The first input byte picks a mode:
 *   0: the rest as one buffer, split as an mbox (or one message);
 *   1: the rest as one file, through mailbox_walk();
 *   2: NUL-separated chunks as files of a Maildir (cur/, new/, tmp/);
 *   3: NUL-separated chunks as a small directory tree.
 * Each message handed to the callback is checked to lie inside the input
 * (or a heap copy) and every byte of it is read. Files live in a private
 * directory made once and emptied after each input. Single-threaded.
 */
#include "../slopctl/mailbox.c"

#include <stdint.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_CHUNKS 12

static char fuzz_root[64];
/* Paths made for one input, removed in reverse order afterwards. */
static char fuzz_made[FUZZ_MAX_CHUNKS * 4 + 8][PATH_MAX];
static size_t fuzz_n_made;

struct fuzz_ctx {
    size_t messages;
    size_t errors;
    unsigned sum;
};

static int
fuzz_msg(void *ctx, const struct mailbox_msg *m)
{
    struct fuzz_ctx *c = ctx;

    if (m->data == NULL || m->file == NULL)
        abort();
    /* Touch every byte so ASan sees any read past the message. */
    for (size_t i = 0; i < m->len; i++)
        c->sum += (unsigned char)m->data[i];
    c->messages++;
    /* A walk that can be stopped must stop: the third message does it. */
    return c->messages == 3 && (c->sum & 1) ? -ECANCELED : 0;
}

static void
fuzz_err(void *ctx, const char *file, size_t index, const char *reason)
{
    struct fuzz_ctx *c = ctx;

    (void)index;
    if (file == NULL || reason == NULL || reason[0] == '\0')
        abort();
    c->errors++;
}

static void
fuzz_mkdir(const char *path)
{
    if (mkdir(path, 0700) < 0 && errno != EEXIST)
        abort();
    snprintf(fuzz_made[fuzz_n_made++], PATH_MAX, "%s", path);
}

static void
fuzz_write(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");

    if (f == NULL)
        abort();
    if (size > 0 && fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
    snprintf(fuzz_made[fuzz_n_made++], PATH_MAX, "%s", path);
}

static void
fuzz_cleanup(void)
{
    while (fuzz_n_made > 0) {
        const char *p = fuzz_made[--fuzz_n_made];

        if (unlink(p) < 0 && rmdir(p) < 0)
            abort();
    }
}

/* Names a chunk's first byte picks: plain, Maildir-like, skipped ones. */
static const char *const fuzz_names[] = {
    "1700000000.M1P1.host:2,S",
    "1700000001.M2P2.host",
    "msg",
    ".hidden",
    "notes.md",
    "labels.csv",
    "From",
    "z",
    "a.eml",
};

static void
fuzz_layout(const uint8_t *data, size_t size, bool maildir)
{
    char dir[256], path[PATH_MAX];
    size_t n_chunks = 0;

    snprintf(dir, sizeof(dir), "%s/d", fuzz_root);
    fuzz_mkdir(dir);
    if (maildir) {
        snprintf(path, sizeof(path), "%s/cur", dir);
        fuzz_mkdir(path);
        snprintf(path, sizeof(path), "%s/new", dir);
        fuzz_mkdir(path);
        snprintf(path, sizeof(path), "%s/tmp", dir);
        fuzz_mkdir(path);
    }
    while (size > 0 && n_chunks < FUZZ_MAX_CHUNKS) {
        const uint8_t *nul = memchr(data, 0, size);
        size_t len = nul ? (size_t)(nul - data) : size;
        unsigned sel = len > 0 ? data[0] : 0;
        const char *name = fuzz_names[sel % (sizeof(fuzz_names) / sizeof(fuzz_names[0]))];

        if (maildir) {
            static const char *const subs[] = {"cur", "new", "tmp"};

            snprintf(path, sizeof(path), "%s/%s/%s.%zu", dir, subs[(sel >> 4) % 3], name, n_chunks);
        } else if (sel & 0x80) {
            /* A subdirectory holding this chunk, to exercise recursion. */
            snprintf(path, sizeof(path), "%s/sub%zu", dir, n_chunks);
            fuzz_mkdir(path);
            snprintf(path, sizeof(path), "%s/sub%zu/%s", dir, n_chunks, name);
        } else {
            snprintf(path, sizeof(path), "%s/%s.%zu", dir, name, n_chunks);
        }
        fuzz_write(path, data + (len > 0 ? 1 : 0), len > 0 ? len - 1 : 0);
        n_chunks++;
        data += len + (nul ? 1 : 0);
        size -= len + (nul ? 1 : 0);
    }
    mailbox_walk(dir, 0, fuzz_msg, fuzz_err, &(struct fuzz_ctx){0});
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    snprintf(fuzz_root, sizeof(fuzz_root), "/tmp/slop-fuzz-mailbox-XXXXXX");
    if (mkdtemp(fuzz_root) == NULL)
        abort();
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_ctx ctx = {0};
    char path[PATH_MAX];
    char *copy;

    if (size < 1)
        return 0;
    switch (data[0] & 3) {
    case 0:
        /* Exact-size copy: one byte past it is outside the allocation. */
        copy = malloc(size - 1 > 0 ? size - 1 : 1);
        if (copy == NULL)
            return 0;
        memcpy(copy, data + 1, size - 1);
        if (starts_with_from(copy, copy + size - 1)) {
            struct walker w = {.fn = fuzz_msg, .err = fuzz_err, .ctx = &ctx};

            walk_mbox(&w, "fuzz", copy, size - 1);
        }
        free(copy);
        break;
    case 1:
        snprintf(path, sizeof(path), "%s/input", fuzz_root);
        fuzz_write(path, data + 1, size - 1);
        mailbox_walk(path, 0, fuzz_msg, fuzz_err, &ctx);
        break;
    default:
        fuzz_layout(data + 1, size - 1, (data[0] & 3) == 2);
        break;
    }
    fuzz_cleanup();
    return 0;
}
