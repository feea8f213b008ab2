-- Monitor mode: the normal X-Slop-* headers plus X-Slop-Action naming what
-- enforce mode would have done; never a reject, quarantine or Subject
-- change, even above RejectThreshold.
local lib = dofile(MSGS .. "/../lib.lua")
local conf = WORK .. "/monitor.conf"
lib.write_conf(conf, { "Mode monitor", "TagThreshold 3", "ReplyThreshold 0",
    "QuarantineThreshold 0", "RejectThreshold 5.5", "SubjectTag [SLOP]" })
local conn = lib.start(conf)

local rc = lib.send(conn, MSGS .. "/lock-swap.eml", { qid = "MON1",
    extra_headers = { { "X-Slop-Action", "forged" } } })
lib.check("monitor: accepted although above RejectThreshold",
    rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
lib.check("monitor: no reply code", not mt.eom_check(conn, MT_SMTPREPLY, "550"))
lib.check("monitor: no quarantine", not mt.eom_check(conn, MT_QUARANTINE))
lib.check("monitor: Subject unchanged", not mt.eom_check(conn, MT_HDRCHANGE, "Subject"))
lib.check("monitor: X-Slop-Action: reject", lib.header(conn, "X-Slop-Action") == "reject",
    lib.header(conn, "X-Slop-Action"))
lib.check("monitor: forged X-Slop-Action removed",
    mt.eom_check(conn, MT_HDRDELETE, "X-Slop-Action", 1))
lib.check_scan_headers(conn, "monitor", true)

rc = lib.send(conn, MSGS .. "/genuine-patch.eml", { qid = "MON2", from = "dana@example.test" })
lib.check("monitor: genuine patch accepted", rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
lib.check("monitor: genuine patch X-Slop-Action: none",
    lib.header(conn, "X-Slop-Action") == "none", lib.header(conn, "X-Slop-Action"))
lib.check_scan_headers(conn, "monitor genuine", false)

mt.disconnect(conn)
lib.finish()
