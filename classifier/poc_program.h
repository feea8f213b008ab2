/*
 * poc_program.h - does a report's C reproducer reach anything outside
 * itself and the C library?
 *
 * A reproducer shows a bug only when it runs the code the bug is in. A
 * program that fills its own buffer, prints and spawns a shell shows the
 * C library working, whatever the report claims of the project.
 */
#ifndef SLOP_POC_PROGRAM_H
#define SLOP_POC_PROGRAM_H

#include "message.h"

/* For a report, sets m->measures[MEASURE_POC_PROGRAMS] to 1 when its
 * body holds a C program with a main() function that calls something,
 * and MEASURE_POC_PROJECT_CALLS to the distinct names that program calls
 * other than its own functions and macros, C keywords, and C library
 * functions that stay inside the process (string, memory, formatting,
 * allocation, exit) or spawn a shell, plus the headers it includes other
 * than the C library's in-process ones. System calls and their wrappers
 * (open, ioctl, socket, syscall) and their headers count as outside:
 * they are how a program reaches the kernel. When none is found, the
 * evidence (owned by m) names the library calls the program makes.
 * Other kinds get 0.
 * Reads at most POC_PROGRAM_MAX_BYTES of the program. Returns 0, or
 * -ENOMEM when the evidence could not be kept (the counts are set). */
int poc_program_measure(struct message *m);

#endif
