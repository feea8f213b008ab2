/*
 * pcre2-nojit.c - linked into the valgrind build of slopctl only (see
 * .ci/valgrind). PCRE2's JIT code reads whole machine words past the end
 * of a subject by design, and Debian's libpcre2 is not built with
 * --enable-valgrind to annotate that, so memcheck would flag every match.
 * Refusing JIT here makes every pattern run on PCRE2's interpreter, which
 * reads only the subject's own bytes: a subject length that covers
 * uninitialised memory then shows up as a real error in our code.
 * rule_set.c treats a failed pcre2_jit_compile() as "no JIT" already.
 */
#include <stdint.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

int
pcre2_jit_compile_8(pcre2_code_8 *code, uint32_t options)
{
    (void)code;
    (void)options;
    return PCRE2_ERROR_JIT_BADOPTION;
}
