/*
 * scanner.h - a long-lived scan thread per calling thread (scanner.c).
 * Thread-safe; each caller thread has its own scan thread.
 */
#ifndef SLOP_SCANNER_H
#define SLOP_SCANNER_H

/* Start fn(arg) on the calling thread's scan thread, creating it the first
 * time. Returns 0, or a negative errno (no thread could be made, -EBUSY:
 * the last job was not abandoned) when the caller must run fn another way.
 * fn must tell the caller itself when it is done. */
int scanner_run(void (*fn)(void *), void *arg);

/* The job given last is taking too long: leave the scan thread to it (it
 * exits when the job returns); the next scanner_run() starts a new one. */
void scanner_abandon(void);

#endif
