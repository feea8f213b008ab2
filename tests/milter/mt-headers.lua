-- Tag headers: X-Slop-Status/-Score/-Report added, inbound X-Slop-* removed
-- (smfi_chgheader with an empty value, highest index first), Subject tagged
-- once, and a clean patch still gets "X-Slop-Status: No".
local lib = dofile(MSGS .. "/../lib.lua")
local conf = WORK .. "/headers.conf"
lib.write_conf(conf, { "ReplyEnable no", "SubjectTag [SLOP]" })
local conn = lib.start(conf)

-- 1. A slop patch (mutex_unlock -> mutex_destroy, no testing) that arrives with forged X-Slop-* fields.
local rc = lib.send(conn, MSGS .. "/lock-swap.eml", {
    qid = "HDR1",
    extra_headers = {
        { "X-Slop-Status", "No, score=0.0 forged" },
        { "X-Slop-Score", "-100" },
        { "X-Slop-Score", "-200" },
        { "X-Slop-Report", "forged" },
    },
})
lib.check("slop patch accepted", rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
local score = lib.check_scan_headers(conn, "slop patch", true)
lib.check("slop patch score >= TagThreshold", score ~= nil and score >= 5, score)
local report = lib.header(conn, "X-Slop-Report")
lib.check("X-Slop-Report added", report ~= nil)
if report then
    lib.check("X-Slop-Report names the lock swap", report:find("LOCK_UNLOCK_TO_DESTROY", 1, true) ~= nil)
    lib.check("X-Slop-Report lines start with points",
        report:match("^%-?%d+%.%d ") ~= nil, report:sub(1, 40))
    lib.check_folding("slop patch", "X-Slop-Report", report)
end
lib.check_folding("slop patch", "X-Slop-Status", lib.header(conn, "X-Slop-Status") or "")
lib.check("forged X-Slop-Status removed", mt.eom_check(conn, MT_HDRDELETE, "X-Slop-Status", 1))
lib.check("forged X-Slop-Score #2 removed", mt.eom_check(conn, MT_HDRDELETE, "X-Slop-Score", 2))
lib.check("forged X-Slop-Score #1 removed", mt.eom_check(conn, MT_HDRDELETE, "X-Slop-Score", 1))
lib.check("forged X-Slop-Report removed", mt.eom_check(conn, MT_HDRDELETE, "X-Slop-Report", 1))
lib.check("Subject tagged", mt.eom_check(conn, MT_HDRCHANGE, "Subject",
    "[SLOP] [PATCH] net/foo: release the lock in foo_release()"))
lib.check("no quarantine", not mt.eom_check(conn, MT_QUARANTINE))
lib.check("no X-Slop-Action outside monitor mode", not lib.added(conn, "X-Slop-Action"))

-- 2. Already tagged on an earlier hop: the tag is not doubled.
rc = lib.send(conn, MSGS .. "/lock-swap.eml", {
    qid = "HDR2", subject = "[SLOP] [PATCH] net/foo: release the lock in foo_release()",
})
lib.check("pre-tagged subject: accepted", rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
lib.check("pre-tagged subject: not tagged twice", not mt.eom_check(conn, MT_HDRCHANGE, "Subject"))

-- 3. A genuine patch: headers say No, nothing else changes.
rc = lib.send(conn, MSGS .. "/genuine-patch.eml", { qid = "HDR3", from = "dana@example.test" })
lib.check("genuine patch accepted", rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
score = lib.check_scan_headers(conn, "genuine patch", false)
lib.check("genuine patch under TagThreshold", score ~= nil and score < 5, score)
lib.check("genuine patch: Subject unchanged", not mt.eom_check(conn, MT_HDRCHANGE, "Subject"))
lib.check("genuine patch: nothing removed", not mt.eom_check(conn, MT_HDRDELETE))

mt.disconnect(conn)
lib.finish()
