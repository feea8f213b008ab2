/*
 * report_trace.h - the lines of a trace, as a report quotes them: a
 * kernel oops or sanitizer report, or another runtime's backtrace.
 * measure.c asks them too, of every line it counts.
 */
#ifndef SLOP_REPORT_TRACE_H
#define SLOP_REPORT_TRACE_H

#include <stdbool.h>
#include <stddef.h>

/* A line of a user-space tool's trace: valgrind's "==1234== Invalid read"
 * or a sanitizer's "#3 0x4f5a3b in foo" frame, leading white space
 * allowed. */
bool report_sanitizer_line(const char *p, size_t len);

/* A line of another runtime's backtrace: Python's "Traceback (most recent
 * call last):" and "File \"x.py\", line 3", Java's "at a.B.c(B.java:42)"
 * and "Caused by:", Ruby's "from x.rb:12:in `f'", JavaScript's and Rust's
 * "at f (x.js:1:2)", Go's "goroutine 1 [running]:", gdb's "#0  0x... in f
 * ()", PHP's "#0 /x.php(12): f()". Leading white space allowed. */
bool report_backtrace_line(const char *p, size_t len);

#endif
