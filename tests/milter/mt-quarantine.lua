-- Quarantine: at QuarantineThreshold the message is accepted with
-- smfi_quarantine (SMFIR_QUARANTINE, Postfix's hold queue), still tagged;
-- the reason is what `slop-milter -t` previews. A clean patch is not held.
local lib = dofile(MSGS .. "/../lib.lua")
local conf = WORK .. "/quarantine.conf"
lib.write_conf(conf, { "ReplyEnable no", "TagThreshold 3", "ReplyThreshold 0",
    "QuarantineThreshold 5.5", "RejectThreshold 0" })
local preview = lib.preview(conf, MSGS .. "/lock-swap.eml")
local reason = lib.preview_get(preview, "quarantine")[1]
local conn = lib.start(conf)

lib.check("preview: quarantine reason given", reason ~= nil)
lib.check("preview: reason names the score and tests",
    reason ~= nil and reason:match("score [%d.]+") ~= nil and
    reason:find("LOCK_UNLOCK_TO_DESTROY", 1, true) ~= nil, reason)

local rc = lib.send(conn, MSGS .. "/lock-swap.eml", { qid = "QUA1" })
lib.check("quarantined message accepted", rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
lib.check("quarantine requested", mt.eom_check(conn, MT_QUARANTINE))
lib.check("quarantine reason equals the preview",
    reason ~= nil and mt.eom_check(conn, MT_QUARANTINE, reason))
lib.check_scan_headers(conn, "quarantined", true)
lib.check("quarantined message still tagged", mt.eom_check(conn, MT_HDRCHANGE, "Subject"))

rc = lib.send(conn, MSGS .. "/genuine-patch.eml", { qid = "QUA2", from = "dana@example.test" })
lib.check("genuine patch accepted", rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
lib.check("genuine patch not quarantined", not mt.eom_check(conn, MT_QUARANTINE))

mt.disconnect(conn)
lib.finish()
