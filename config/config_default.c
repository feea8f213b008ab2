/*
 * config_default.c - the defaults that depend on where the program runs
 * (the key rows whose def is NULL): the socket and the state directory
 * from systemd's $RUNTIME_DIRECTORY and $STATE_DIRECTORY or the build
 * tree, the rules directory, the reply's From from the host name, the
 * document base from Project. struct config_paths overrides them (tests).
 *
 * Reads the environment and the host name; no state of its own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buildtree.h"
#include "config_internal.h"

#ifndef SLOP_DEFAULT_RULES_DIR
#define SLOP_DEFAULT_RULES_DIR "/usr/share/slop-milter/rules"
#endif

/* The first entry of a systemd colon-separated directory list. */
static void
first_dir(const char *list, char *buf, size_t size)
{
    size_t len = strcspn(list, ":");

    if (len >= size)
        len = size - 1;
    memcpy(buf, list, len);
    buf[len] = '\0';
}

static int
default_socket(struct config *cfg, const struct config_paths *paths)
{
    char buf[1024], dir[900];
    const char *env;

    if (paths && paths->runtime_dir)
        snprintf(dir, sizeof(dir), "%s", paths->runtime_dir);
    else if ((env = getenv("RUNTIME_DIRECTORY")) != NULL && *env == '/')
        first_dir(env, dir, sizeof(dir));
    else if (buildtree_dir() != NULL) /* make run: the build tree's own */
        snprintf(dir, sizeof(dir), "%s", buildtree_dir());
    else
        snprintf(dir, sizeof(dir), "/run/slop-milter");
    snprintf(buf, sizeof(buf), "local:%s/slop-milter.sock", dir);
    if (!config_socket_valid(buf)) /* a path too long for sun_path */
        snprintf(buf, sizeof(buf), "local:/tmp/slop-milter.sock");
    return config_type_string_replace(&cfg->socket, buf);
}

static int
default_rules_dir(struct config *cfg, const struct config_paths *paths)
{
    return config_type_string_replace(
        &cfg->rules_dir, paths && paths->rules_dir ? paths->rules_dir : SLOP_DEFAULT_RULES_DIR);
}

static int
default_state_dir(struct config *cfg, const struct config_paths *paths)
{
    char dir[900];
    const char *env;

    if (paths && paths->state_dir)
        snprintf(dir, sizeof(dir), "%s", paths->state_dir);
    else if ((env = getenv("STATE_DIRECTORY")) != NULL && *env == '/')
        first_dir(env, dir, sizeof(dir));
    else if (buildtree_dir() != NULL) /* whoever runs it: never the system's */
        snprintf(dir, sizeof(dir), "%s/var/state", buildtree_dir());
    else
        snprintf(dir, sizeof(dir), "/var/lib/slop-milter");
    return config_type_string_replace(&cfg->state_dir, dir);
}

static int
default_reply_from(struct config *cfg, const struct config_paths *paths)
{
    char buf[1024], host[256] = "localhost";

    if (paths && paths->hostname)
        snprintf(host, sizeof(host), "%s", paths->hostname);
    else if (gethostname(host, sizeof(host)) != 0 || host[0] == '\0')
        snprintf(host, sizeof(host), "localhost");
    host[sizeof(host) - 1] = '\0';
    snprintf(buf, sizeof(buf), "slop-milter <postmaster@%s>", host);
    return config_type_string_replace(&cfg->reply_from, buf);
}

/* Runs after every key was read, so Project is known. */
static int
default_doc_base(struct config *cfg, const struct config_paths *paths)
{
    (void)paths;
    return config_type_string_replace(&cfg->doc_base,
                                      cfg->project != NULL && strcmp(cfg->project, "kernel") == 0
                                          ? "https://docs.kernel.org/"
                                          : "");
}

static const struct {
    size_t offset;
    int (*compute)(struct config *cfg, const struct config_paths *paths);
} computed[] = {
    {offsetof(struct config, socket), default_socket},
    {offsetof(struct config, rules_dir), default_rules_dir},
    {offsetof(struct config, state_dir), default_state_dir},
    {offsetof(struct config, reply_from), default_reply_from},
    {offsetof(struct config, doc_base), default_doc_base},
};

int
config_default_compute(struct config *cfg, const struct key *k, const struct config_paths *paths)
{
    for (size_t i = 0; i < sizeof(computed) / sizeof(computed[0]); i++)
        if (computed[i].offset == k->offset)
            return computed[i].compute(cfg, paths);
    return -EINVAL;
}
