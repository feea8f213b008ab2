/*
 * buildtree.c - the build tree a program runs from, if any (buildtree.h).
 *
 * Looked up once (pthread_once) from /proc/self/exe and the CMakeCache.txt
 * one level above the program's directory; the cache's project entry
 * (CMAKE_PROJECT_NAME:STATIC=slop-milter) tells it is ours and its
 * slop-milter_SOURCE_DIR entry where the sources are. Only the first
 * BUILDTREE_CACHE_MAX bytes of the cache are read: the two entries sit
 * among the first hundred lines CMake writes.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buildtree.h"
#include "file_read.h"

#define BUILDTREE_CACHE_MAX (1u << 20)

static pthread_once_t buildtree_once = PTHREAD_ONCE_INIT;
static char buildtree_build[PATH_MAX];
static char buildtree_src[PATH_MAX];

/* The value of "key=..." at a line's start in text, into buf. */
static int
cache_value(const char *text, const char *key, char *buf, size_t size)
{
    size_t kl = strlen(key), len;
    const char *p = text;

    while (p != NULL && strncmp(p, key, kl) != 0) {
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    if (p == NULL)
        return -1;
    p += kl;
    len = strcspn(p, "\r\n");
    if (len == 0 || len >= size)
        return -1;
    memcpy(buf, p, len);
    buf[len] = '\0';
    return 0;
}

static void
buildtree_look(void)
{
    char exe[PATH_MAX], cache[PATH_MAX + 32], name[64], *text = NULL, *slash;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    size_t len;

    if (n <= 0)
        return;
    exe[n] = '\0';
    /* exe's directory, then the one above it */
    for (int up = 0; up < 2; up++) {
        slash = strrchr(exe, '/');
        if (slash == NULL || slash == exe)
            return;
        *slash = '\0';
    }
    snprintf(cache, sizeof(cache), "%s/CMakeCache.txt", exe);
    if (file_read(cache, BUILDTREE_CACHE_MAX, FILE_READ_CUT, &text, &len) < 0)
        return;
    if (cache_value(text, "CMAKE_PROJECT_NAME:STATIC=", name, sizeof(name)) < 0 ||
        strcmp(name, "slop-milter") != 0 ||
        cache_value(text, "slop-milter_SOURCE_DIR:STATIC=", buildtree_src, sizeof(buildtree_src)) <
            0) {
        buildtree_src[0] = '\0';
        goto out;
    }
    snprintf(buildtree_build, sizeof(buildtree_build), "%s", exe);
out:
    free(text);
}

const char *
buildtree_dir(void)
{
    pthread_once(&buildtree_once, buildtree_look);
    return buildtree_build[0] != '\0' ? buildtree_build : NULL;
}

const char *
buildtree_source(void)
{
    pthread_once(&buildtree_once, buildtree_look);
    return buildtree_build[0] != '\0' ? buildtree_src : NULL;
}
