/*
 * test_poc_program.c - the calls a report's C reproducer makes
 * (poc_program.c): a program that stays inside the C library, one that
 * reaches a project by a call, a header or a system call, and the edges
 * (literals, comments, helpers, a shell spawned or another program run,
 * a sketch with no calls, other kinds of mail, the size cap).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "message.h"
#include "poc_program.h"

struct poc_case {
    const char *what;
    enum classifier_kind kind;
    const char *body;
    double programs, calls;
    const char *evidence; /* a substring of the evidence, or NULL for none */
};

static const struct poc_case cases[] = {
    {"own buffer, printf and a shell", CLASSIFIER_KIND_REPORT,
     "PoC:\n\n#include <stdio.h>\n#include <string.h>\n#include <unistd.h>\n"
     "#define OFFSET 40\n"
     "void exploit(void) {\n    char buf[64];\n    memset(buf, 'A', OFFSET);\n"
     "    printf(\"[*] sending (payload)\\n\");\n"
     "    char *args[] = { \"/bin/sh\", NULL };\n    execve(\"/bin/sh\", args, NULL);\n}\n"
     "int main(void) {\n    exploit(); // then call(ed)\n    return 0;\n}\n",
     1, 0, "memset(), printf(), execve()"},
    {"a project's call", CLASSIFIER_KIND_REPORT,
     "#include <stdio.h>\nint main(void)\n{\n    char *in = \"%x %x\";\n"
     "    widget_printf(stdout, in);\n    return 0;\n}\n",
     1, 1, NULL},
    {"a project's header", CLASSIFIER_KIND_REPORT,
     "#include <stdio.h>\n#include <widget/widget.h>\nint main(void) { puts(\"x\"); return 0; }\n",
     1, 1, NULL},
    {"system calls and their header", CLASSIFIER_KIND_REPORT,
     "\t#include <sys/socket.h>\n\tint main(void) {\n\t\tint s = socket(40, 1, 0);\n"
     "\t\tclose(s);\n\t\treturn 0;\n\t}\n",
     1, 3, NULL},
    {"another program run, not a shell", CLASSIFIER_KIND_REPORT,
     "#include <stdlib.h>\nint main(void) { return system(\"widget-get http://x/\"); }\n", 1, 1,
     NULL},
    {"a shell given a command line with -c runs another program", CLASSIFIER_KIND_REPORT,
     "#include <unistd.h>\nint main(void) {\n"
     "    execl(\"/bin/sh\", \"sh\", \"-c\", \"exec widget-helper --user x\", (char *)0);\n"
     "    return 1;\n}\n",
     1, 1, NULL},
    {"a bare shell stays inside, whatever follows the call", CLASSIFIER_KIND_REPORT,
     "#include <unistd.h>\nint main(void) {\n    execl(\"/bin/sh\", \"sh\", (char *)0);\n"
     "    puts(\"-c\");\n    return 1;\n}\n",
     1, 0, "execl()"},
    {"a call named in a string or a comment is no call", CLASSIFIER_KIND_REPORT,
     "#include <stdio.h>\nint main(void) {\n  /* widget_open(); */\n"
     "  printf(\"widget_open(x)\\n\");\n  return 0;\n}\n",
     1, 0, "printf()"},
    {"a helper defined after main() counts as outside", CLASSIFIER_KIND_REPORT,
     "#include <stdio.h>\nint main(void) { helper(); return 0; }\nvoid helper(void) { puts(\"x\"); "
     "}\n",
     1, 1, NULL},
    {"a sketch with its steps in a comment", CLASSIFIER_KIND_REPORT,
     "#include <stdio.h>\nint main(void) { /* open; ioctl; close */ return 0; }\n", 0, 0, NULL},
    {"prose that names main() is no program", CLASSIFIER_KIND_REPORT,
     "The crash happens before main() runs, in the loader.\n", 0, 0, NULL},
    {"the same program in a patch", CLASSIFIER_KIND_PATCH,
     "#include <stdio.h>\nint main(void) { puts(\"x\"); return 0; }\n", 0, 0, NULL},
    {"calls after the program are not its own", CLASSIFIER_KIND_REPORT,
     "#include <string.h>\nint main(void) { char b[4]; strcpy(b, \"abc\"); return 0; }\n\n"
     "Then run widget_parse(b) in the project.\n",
     1, 0, "strcpy()"},
};

static void
test_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct poc_case *c = &cases[i];
        struct message *m = calloc(1, sizeof(*m));
        const char *ev;

        assert_non_null(m);
        m->kind = c->kind;
        m->regions[REGION_BODY].text = strdup(c->body);
        assert_non_null(m->regions[REGION_BODY].text);
        m->regions[REGION_BODY].len = strlen(c->body);
        assert_int_equal(poc_program_measure(m), 0);
        ev = m->measure_evidence[MEASURE_POC_PROJECT_CALLS];
        if (m->measures[MEASURE_POC_PROGRAMS] != c->programs ||
            m->measures[MEASURE_POC_PROJECT_CALLS] != c->calls ||
            (c->evidence == NULL) != (ev == NULL) ||
            (c->evidence != NULL && strstr(ev, c->evidence) == NULL))
            fail_msg("%s: programs=%g calls=%g evidence '%s'", c->what,
                     m->measures[MEASURE_POC_PROGRAMS], m->measures[MEASURE_POC_PROJECT_CALLS],
                     ev != NULL ? ev : "(none)");
        message_free(m);
    }
}

/* A program longer than the cap is read up to the cap: a call past it is
 * not seen, and the scan stays bounded. */
static void
test_cap(void **state)
{
    size_t pad = 40000, len;
    const char *head = "#include <stdio.h>\nint main(void) {\n  puts(\"x\");\n";
    const char *tail = "  widget_open();\n}\n";
    struct message *m = calloc(1, sizeof(*m));
    char *body;

    (void)state;
    assert_non_null(m);
    len = strlen(head) + pad + strlen(tail);
    body = malloc(len + 1);
    assert_non_null(body);
    memcpy(body, head, strlen(head));
    memset(body + strlen(head), ' ', pad);
    memcpy(body + strlen(head) + pad, tail, strlen(tail) + 1);
    m->kind = CLASSIFIER_KIND_REPORT;
    m->regions[REGION_BODY].text = body;
    m->regions[REGION_BODY].len = len;
    assert_int_equal(poc_program_measure(m), 0);
    assert_true(m->measures[MEASURE_POC_PROGRAMS] == 1);
    assert_true(m->measures[MEASURE_POC_PROJECT_CALLS] == 0);
    message_free(m);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_cap),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
