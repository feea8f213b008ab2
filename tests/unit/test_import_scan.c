/*
 * test_import_scan.c - the names "slopctl import tree" finds in C,
 * assembler and Kconfig text: definitions and declarations at file level
 * only, #define names, the symbols EXPORT_SYMBOL() and SYSCALL_DEFINEn()
 * name, nothing from comments, strings or bodies, and the depth reset at
 * a brace in column 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "import_scan.h"

/* Every name found, as "kind:name" separated by spaces. */
struct found {
    char text[2048];
    size_t len;
};

static void
collect(void *ctx, const char *name, size_t n, char kind)
{
    struct found *fd = ctx;
    int k = snprintf(fd->text + fd->len, sizeof(fd->text) - fd->len, "%s%c:%.*s",
                     fd->len > 0 ? " " : "", kind, (int)n, name);

    assert_true(k > 0 && (size_t)k < sizeof(fd->text) - fd->len);
    fd->len += (size_t)k;
}

static const struct {
    const char *in;
    const char *names;
} c_cases[] = {
    {"static int helper(int a)\n{\n\treturn inner(a);\n}\n", "f:helper"},
    {"int *ptr_func(void);\n", "f:ptr_func"},
    {"long\nmulti_line\n(int a)\n{\n}\n", "f:multi_line"},
    {"// notme(\n/* nor_me( */\nint yes(void);\n", "f:yes"},
    {"char *s = \"str_func(\";\nchar c = '\\'';\nint after(void);\n", "f:after"},
    {"#define MACRO_A(x) (x)\n#  define\tMACRO_B 1\n#include <x.h>\n", "m:MACRO_A m:MACRO_B"},
    {"#define LONG_ONE \\\n\tnot_a_def(x)\nint real(void);\n", "m:LONG_ONE f:real"},
    {"EXPORT_SYMBOL(helper);\nEXPORT_SYMBOL_GPL( other );\n", "e:helper e:other"},
    {"SYSCALL_DEFINE3(open, int, a)\n{\n}\n", "s:sys_open s:__do_sys_open s:__se_sys_open"},
    {"COMPAT_SYSCALL_DEFINE1(foo, int, a)\n{\n}\n", "s:compat_sys_foo s:__do_compat_sys_foo"},
    {"BPF_CALL_2(bpf_thing, int, a)\n{\n}\n", "f:bpf_thing"},
    {"ENTRY(asm_entry)\nSYM_FUNC_START(asm_sym)\nGLOBAL(asm_global)\n",
     "f:asm_entry f:asm_sym f:asm_global"},
    {"struct s { int (*fn)(int); };\nint after_struct(void);\n", "f:after_struct"},
    /* Both #ifdef branches open a brace: column 0 resets the depth. */
    {"#ifdef X\nvoid a(void) {\n#else\nvoid b(void) {\n#endif\n\tx();\n}\nint c(void);\n",
     "f:a f:c"},
    /* A stray paren at file level ends at the next ';'. */
    {"int broken(int a;\nint fine(void);\n", "f:broken f:fine"},
    {"x = call(1);\n", ""},
    {"", ""},
};

static void
test_c(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(c_cases) / sizeof(c_cases[0]); i++) {
        struct found fd = {.len = 0};

        import_scan_c(c_cases[i].in, strlen(c_cases[i].in), collect, &fd);
        if (strcmp(fd.text, c_cases[i].names) != 0)
            fail_msg("case %zu: got '%s', want '%s'", i, fd.text, c_cases[i].names);
    }
}

static void
test_kconfig(void **state)
{
    static const char text[] = "config FOO\n\tbool \"foo\"\nmenuconfig BAR_BAZ\n  config\tTABBED\n"
                               "configX NOPE\n # config COMMENTED\nconfig";
    struct found fd = {.len = 0};

    (void)state;
    import_scan_kconfig(text, strlen(text), collect, &fd);
    assert_string_equal(fd.text, "c:CONFIG_FOO c:CONFIG_BAR_BAZ c:CONFIG_TABBED");
}

/* Names past the cap are dropped, not cut: sys_ fits exactly, the longer
 * prefixes do not; CONFIG_ and a long name do not. */
static void
test_caps(void **state)
{
    char text[400], name[200], want[200];
    int k = IMPORT_SCAN_MAX_NAME - 4;
    struct found fd = {.len = 0};

    (void)state;
    memset(name, 'a', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    snprintf(text, sizeof(text), "SYSCALL_DEFINE0(%.*s)\n{\n}\n", k, name);
    snprintf(want, sizeof(want), "s:sys_%.*s", k, name);
    import_scan_c(text, strlen(text), collect, &fd);
    assert_string_equal(fd.text, want);
    fd.len = 0;
    fd.text[0] = '\0';
    snprintf(text, sizeof(text), "config %.*s\n", IMPORT_SCAN_MAX_NAME - 6, name);
    import_scan_kconfig(text, strlen(text), collect, &fd);
    assert_string_equal(fd.text, "");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_c),
        cmocka_unit_test(test_kconfig),
        cmocka_unit_test(test_caps),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
