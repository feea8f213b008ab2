/*
 * import_scan.h - the names a source tree defines, read from the text of
 * one file at a time for "slopctl import tree": top-level functions,
 * #define names, EXPORT_SYMBOL() arguments and the names SYSCALL_DEFINEn()
 * generates in C and assembler, CONFIG_ symbols in Kconfig. No state, no
 * allocation; thread-safe.
 */
#ifndef SLOPCTL_IMPORT_SCAN_H
#define SLOPCTL_IMPORT_SCAN_H

#include <stddef.h>

/* Names longer than this are not handed on. */
#define IMPORT_SCAN_MAX_NAME 127

/* Called for each name found, with its kind: 'f' function, 'm' macro,
 * 'e' exported symbol, 's' system call, 'c' CONFIG_ symbol. name is not
 * NUL-terminated and lives only for the call. */
typedef void import_scan_fn(void *ctx, const char *name, size_t n, char kind);

/* One pass over a C or assembler file's text s[0..n). */
void import_scan_c(const char *s, size_t n, import_scan_fn *add, void *ctx);

/* One pass over a Kconfig file's text: "config FOO" and "menuconfig FOO"
 * give CONFIG_FOO. */
void import_scan_kconfig(const char *s, size_t n, import_scan_fn *add, void *ctx);

#endif
