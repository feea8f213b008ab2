-- Reject: a message at RejectThreshold gets a multi-line 550 5.7.1 reply
-- (SMFIR_REPLYCODE) that names the findings and points to the threat
-- model; the live reply is exactly what `slop-milter -t` previews. A clean
-- patch on the same connection is still accepted.
local lib = dofile(MSGS .. "/../lib.lua")
local conf = WORK .. "/reject.conf"
lib.write_conf(conf, { "ReplyEnable no", "TagThreshold 3", "ReplyThreshold 0",
    "QuarantineThreshold 0", "RejectThreshold 5.5" })
local preview = lib.preview(conf, MSGS .. "/lock-swap.eml")
local lines = lib.preview_get(preview, "smtp-reply")
local conn = lib.start(conf)

lib.check("preview: reply has several lines", #lines >= 3, #lines)
lib.check("preview: at most 32 lines", #lines <= 32, #lines)
local all_550 = true
for _, l in ipairs(lines) do
    if not l:match("^550 5%.7%.1 ") or #l > 980 + 10 then
        all_550 = false
    end
end
lib.check("preview: every line is 550 5.7.1 and short", all_550)
lib.check("preview: a line names the lock swap",
    table.concat(lines, "\n"):find("LOCK_UNLOCK_TO_DESTROY", 1, true) ~= nil)
lib.check("preview: last line points to the threat model",
    #lines > 0 and lines[#lines]:find("threat-model", 1, true) ~= nil, lines[#lines])
lib.check("preview: result reject", lib.preview_get(preview, "result")[1] == "reject")

local rc = lib.send(conn, MSGS .. "/lock-swap.eml", { qid = "REJ1" })
lib.check("lock swap answered with a reply code", rc == SMFIR_REPLYCODE, rc)
lib.check("reply text equals the -t preview",
    mt.eom_check(conn, MT_SMTPREPLY, lib.replycode_text(lines)))
lib.check("rejected message gets no headers", not lib.added(conn, "X-Slop-Status"))

rc = lib.send(conn, MSGS .. "/genuine-patch.eml", { qid = "REJ2", from = "dana@example.test" })
lib.check("genuine patch on the same connection accepted",
    rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
lib.check("genuine patch: no reply code", not mt.eom_check(conn, MT_SMTPREPLY, "550"))

mt.disconnect(conn)
lib.finish()
