/*
 * daemon_state.c - StateDir's data file looked at before the daemon (or
 * -n) maps it, and what OnStateError makes of damage: refuse to start,
 * or run without state, answering tempfail or accepting unscanned. Also
 * the last words when LMDB meets damage while serving. Start-up only, but
 * for daemon_state_damaged().
 */
#include <errno.h>
#include <stdint.h>
#include <sysexits.h>

#include "config.h"
#include "daemon_state.h"
#include "log.h"
#include "state.h"

/*
 * Check StateDir's data file before anything maps it: LMDB would fault on
 * a file cut short, start an emptied one over without a word, and abort
 * the daemon on a damaged page (so its pages are walked, when they are not
 * known whole). Sets *ret_without when OnStateError lets the daemon run
 * without state. Returns EX_OK, or EX_CANTCREAT to refuse. A file that
 * cannot be read at all is left for state_open() to report.
 */
int
daemon_state_file_ok(const struct config *cfg, bool *ret_without)
{
    struct state_check chk;
    uint32_t schema;
    char why[400];
    const char *how;
    int r;

    *ret_without = false;
    r = state_check_pages(cfg->state_dir, &chk);
    /* A state from a newer release is no damage: refused whatever
     * OnStateError says, in the words slopctl uses. */
    if (r == 0 && chk.present && state_schema_read(cfg->state_dir, &schema) == 0 &&
        schema > STATE_SCHEMA_VERSION) {
        state_open_strerror(cfg->state_dir, -EPROTO, why, sizeof(why));
        log_error("cannot open StateDir '%s': %s", cfg->state_dir, why);
        return EX_CANTCREAT;
    }
    if (r != -EUCLEAN)
        return EX_OK;
    switch (cfg->on_state_error) {
    case CONFIG_STATE_RUN_WITHOUT:
        how = "running without state (OnStateError run-without): no replies, no findings "
              "that need it";
        break;
    case CONFIG_STATE_TEMPFAIL:
        how = "answering every message 4xx (OnStateError tempfail): the MTA keeps them queued";
        break;
    case CONFIG_STATE_ACCEPT:
        how = "accepting every message unscanned (OnStateError accept)";
        break;
    default:
        log_error("StateDir: data.mdb damaged (%s) in '%s', refusing to start "
                  "(see slopctl db check and db recover, or OnStateError)",
                  chk.reason, cfg->state_dir);
        return EX_CANTCREAT;
    }
    log_error("StateDir: data.mdb damaged (%s) in '%s', %s; see slopctl db check and db recover",
              chk.reason, cfg->state_dir, how);
    *ret_without = true;
    return EX_OK;
}

/* LMDB met a damaged page while serving: it aborts the daemon when this
 * returns. The damage is recorded; the next start applies OnStateError. */
void
daemon_state_damaged(const char *dir, const char *reason)
{
    log_error("StateDir: data.mdb damaged (%s) in '%s', stopping; the next start applies "
              "OnStateError (see slopctl db check and db recover)",
              reason, dir);
}
