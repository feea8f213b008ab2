/*
 * verdict_apply.c - a verdict's plan (verdict.c) carried out through
 * libmilter at end of message: headers removed, Subject changed, headers
 * added, quarantine, the SMTP reply, and the status to answer. Runs on the
 * connection's thread inside a libmilter callback.
 */
#include <errno.h>
#include <stddef.h>

#include <libmilter/mfapi.h>

#include "verdict.h"
#include "verdict_apply.h"

/* libmilter's API takes char * for names it never changes. */
static char hdr_subject[] = "Subject";

sfsistat
verdict_apply_status(const struct verdict_plan *p)
{
    switch (p->result) {
    case VERDICT_REJECT:
        return SMFIS_REJECT;
    case VERDICT_TEMPFAIL:
        return SMFIS_TEMPFAIL;
    default:
        return SMFIS_CONTINUE;
    }
}

int
verdict_apply_reply(SMFICTX *ctx, struct verdict_plan *p)
{
    char esc[VERDICT_MAX_SMTP_LINES][VERDICT_SMTP_LINE_MAX + 1];
    char *l[VERDICT_MAX_SMTP_LINES + 1] = {NULL};

    if (p->n_smtp_lines == 0 || p->rcode[0] == '\0')
        return 0;
    for (size_t i = 0; i < p->n_smtp_lines; i++) {
        if (verdict_escape(p->smtp_lines[i], esc[i], sizeof(esc[i])) < 0)
            return -ENOSPC;
        l[i] = esc[i];
    }
    if (p->n_smtp_lines == 1)
        return smfi_setreply(ctx, p->rcode, p->xcode, l[0]) == MI_SUCCESS ? 0 : -EIO;
    /* smfi_setmlreply stops at the first NULL; unused slots are NULL. */
    return smfi_setmlreply(ctx, p->rcode, p->xcode, l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7],
                           l[8], l[9], l[10], l[11], l[12], l[13], l[14], l[15], l[16], l[17],
                           l[18], l[19], l[20], l[21], l[22], l[23], l[24], l[25], l[26], l[27],
                           l[28], l[29], l[30], l[31], (char *)NULL) == MI_SUCCESS
               ? 0
               : -EIO;
}

int
verdict_apply(SMFICTX *ctx, struct verdict_plan *p, const char **ret_what)
{
    for (size_t i = 0; i < p->n_remove; i++) {
        if (smfi_chgheader(ctx, p->remove[i].name, (int)p->remove[i].index, NULL) != MI_SUCCESS) {
            *ret_what = "smfi_chgheader (remove)";
            return -EIO;
        }
    }
    if (p->subject) {
        int ok = p->subject_add ? smfi_addheader(ctx, hdr_subject, p->subject)
                                : smfi_chgheader(ctx, hdr_subject, 1, p->subject);

        if (ok != MI_SUCCESS) {
            *ret_what = "smfi_chgheader (Subject)";
            return -EIO;
        }
    }
    for (size_t i = 0; i < p->n_add; i++) {
        if (smfi_addheader(ctx, p->add[i].name, p->add[i].value) != MI_SUCCESS) {
            *ret_what = "smfi_addheader";
            return -EIO;
        }
    }
    if (p->quarantine && smfi_quarantine(ctx, p->quarantine) != MI_SUCCESS) {
        *ret_what = "smfi_quarantine";
        return -EIO;
    }
    if (verdict_apply_reply(ctx, p) < 0) {
        *ret_what = "smfi_setmlreply";
        return -EIO;
    }
    return 0;
}
