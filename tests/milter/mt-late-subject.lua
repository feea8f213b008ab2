-- A Subject past MaxHeaders (issue 13, item 5): 1,100 filler fields, then
-- the message's own fields. The Subject there is the one tagged, with
-- smfi_chgheader; no second Subject is added. A near miss: the same with
-- no Subject at all still gets one added, once.
local lib = dofile(MSGS .. "/../lib.lua")
local conf = WORK .. "/late-subject.conf"
lib.write_conf(conf, { "ReplyEnable no", "SubjectTag [SLOP]", "MaxHeaders 1000" })
local conn = lib.start(conf)

local fillers = {}
for i = 1, 1100 do
    fillers[i] = { "X-Filler-" .. i, "filler field " .. i }
end

-- 1. The lock swap (tagged) with its Subject after 1,100 other fields.
local rc = lib.send(conn, MSGS .. "/lock-swap.eml", { qid = "LATE1", extra_headers = fillers })
lib.check("late subject: accepted", rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
local score = lib.check_scan_headers(conn, "late subject", true)
lib.check("late subject: score >= TagThreshold", score ~= nil and score >= 5, score)
lib.check("late subject: the existing Subject is tagged",
    mt.eom_check(conn, MT_HDRCHANGE, "Subject",
        "[SLOP] [PATCH] net/foo: release the lock in foo_release()"))
lib.check("late subject: no second Subject added", not lib.added(conn, "Subject"))

-- 2. Near miss: no Subject anywhere, 1,100 fields: one Subject is added.
local headers, body = lib.read_message(MSGS .. "/lock-swap.eml")
mt.macro(conn, SMFIC_MAIL, "i", "LATE2")
assert(mt.mailfrom(conn, "casey@example.test") == nil)
assert(mt.rcptto(conn, "security@slop.test") == nil)
for _, h in ipairs(fillers) do
    assert(mt.header(conn, h[1], h[2]) == nil)
end
for _, h in ipairs(headers) do
    if h[1]:lower() ~= "subject" then
        assert(mt.header(conn, h[1], h[2]) == nil)
    end
end
assert(mt.eoh(conn) == nil)
assert(mt.bodystring(conn, body) == nil)
mt.getreply(conn)
assert(mt.eom(conn) == nil)
rc = mt.getreply(conn)
lib.check("no subject: accepted", rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
lib.check("no subject: one Subject added", lib.added(conn, "Subject"))
lib.check("no subject: nothing changed", not mt.eom_check(conn, MT_HDRCHANGE, "Subject"))

mt.disconnect(conn)
lib.finish()
