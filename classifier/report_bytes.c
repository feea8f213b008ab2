/*
 * report_bytes.c - the classes of bytes a report line holds, and the
 * classes each question about a line needs (report_parser.h): a question
 * is asked only of a line that holds every class its answer needs.
 *
 * Threading: the tables are built once (report_bytes_init(), under the
 * caller's pthread_once()) and only read after.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "report_parser.h"

static const char byte_class_punct[] = " \t/():[].-_=#+<>{};@$~`,";

_Static_assert(BC_PUNCT + sizeof(byte_class_punct) - 1 < BC_OTHER, "the classes fit 64 bits");

uint64_t report_bytes_class[256];
bool report_bytes_path[256];
struct report_need report_bytes_need;

static void
byte_class_init(void)
{
    for (unsigned c = 0; c < 256; c++) {
        const char *q = c != 0 ? strchr(byte_class_punct, (int)c) : NULL;

        if (c >= 'a' && c <= 'z')
            report_bytes_class[c] = BC(c - 'a');
        else if (c >= 'A' && c <= 'Z')
            report_bytes_class[c] = BC(c - 'A') | BC(BC_UPPER);
        else if (c >= '0' && c <= '9')
            report_bytes_class[c] = BC(BC_DIGIT);
        else if (q != NULL)
            report_bytes_class[c] = BC(BC_PUNCT + (unsigned)(q - byte_class_punct));
        else
            report_bytes_class[c] = BC(BC_OTHER);
    }
}

void
report_bytes_init(void)
{
    struct report_need *need = &report_bytes_need;

    byte_class_init();
    for (unsigned c = 0; c < 256; c++)
        report_bytes_path[c] =
            ascii_is_word((unsigned char)c) || c == '.' || c == '/' || c == '-' || c == '+';
    need->url = bytes_of("http://");
    need->config = bytes_of("CONFIG_");
    need->call = bytes_of("()");
    need->slash = bytes_of("/");
    need->dot_or_k = bytes_of(".k");
    need->named = bytes_of("K");
    need->next = bytes_of("next-0");
    need->commit = bytes_of("commit ");
    need->colon = bytes_of(":");
    need->timestamp = bytes_of("[0.]");
    need->frame_old = bytes_of("[<");
    need->frame = bytes_of("+0x/");
    need->sanitizer = bytes_of("=#");
    need->prompt = bytes_of("$#@_");
    need->code = bytes_of(";{}=");
    need->hash = bytes_of("#");
    need->paren = bytes_of("(");
    need->hex0x = bytes_of("0x");
    need->ffff = bytes_of("f");
    need->digit = bytes_of("0");
    need->cvss = bytes_of("cvss");
    need->dash = bytes_of("-");
    {
        static const char *const words[] = {"commit", "head", "master", "main",
                                            "tree",   "rev",  "sha1"};

        _Static_assert(sizeof(words) / sizeof(words[0]) ==
                           sizeof(need->commit_words) / sizeof(need->commit_words[0]),
                       "a class set for every word");
        for (size_t k = 0; k < sizeof(words) / sizeof(words[0]); k++)
            need->commit_words[k] = bytes_of(words[k]);
    }
}
